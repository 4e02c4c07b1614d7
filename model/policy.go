package model

import (
	"fmt"
	"math"
	"strconv"
)

// ResourcePolicy is what one trial gets: the guarantee (the task's spec)
// and the hard kill limit (ratio × spec, none when uncapped).
type ResourcePolicy struct {
	Ratio          Ratio `json:"ratio"`
	GuaranteeBytes int64 `json:"guarantee_bytes"`
	HardLimitBytes int64 `json:"hard_limit_bytes"` // 0: no hard limit
	// SpecLimitBytes is the task's own 1x limit where it names one apart
	// from its guarantee (Resources.MemoryLimitBytes): ratios scale it.
	SpecLimitBytes int64   `json:"spec_limit_bytes,omitempty"`
	GuaranteeCPUs  float64 `json:"guarantee_cpus"`
	LimitCPUs      float64 `json:"limit_cpus"` // 0: no CPU limit
	// CPULimitCapped is set when ratio × spec CPUs exceeded the host's CPUs
	// and the limit was lowered to the host's count (the engine refuses more).
	CPULimitCapped bool `json:"cpu_limit_capped,omitempty"`
	// PidsLimit caps the container's processes (0: no limit, as under the
	// harbor profile).
	PidsLimit int64 `json:"pids_limit"`
	// Scale is what the ratio limited, when not both (older records,
	// which have none, scaled both).
	Scale Scale `json:"scale,omitempty"`
}

// Scale says which resources a sweep's ratio limits. The other keeps its
// guarantee (the reservation, the CPU shares) but gets no hard limit, so
// a memory sweep shows memory's effect alone, and a CPU sweep CPU's.
type Scale string

// The scales a sweep can use; ScaleBoth is the default.
const (
	ScaleBoth   Scale = "both"
	ScaleMemory Scale = "memory"
	ScaleCPU    Scale = "cpu"
)

// ParseScale reads "memory", "cpu" or "both" ("" is both).
func ParseScale(s string) (Scale, error) {
	switch Scale(s) {
	case "", ScaleBoth:
		return ScaleBoth, nil
	case ScaleMemory, ScaleCPU:
		return Scale(s), nil
	}
	return "", fmt.Errorf("scale must be memory, cpu or both (got %q)", s)
}

// Memory says whether the ratio limits memory.
func (s Scale) Memory() bool { return s != ScaleCPU }

// CPU says whether the ratio limits CPU.
func (s Scale) CPU() bool { return s != ScaleMemory }

// NewPolicy derives a trial's policy from the task's spec and a ratio,
// limiting both memory and CPU.
func NewPolicy(spec Resources, r Ratio, hostCPUs int) ResourcePolicy {
	return NewScaledPolicy(spec, r, hostCPUs, ScaleBoth)
}

// NewScaledPolicy derives a trial's policy, limiting what scale names:
// the hard limit is the ratio times the task's 1x limit (its own
// memory_limit where it has one, else its guarantee).
func NewScaledPolicy(spec Resources, r Ratio, hostCPUs int, scale Scale) ResourcePolicy {
	p := ResourcePolicy{
		Ratio:          r,
		GuaranteeBytes: spec.MemoryBytes,
		GuaranteeCPUs:  spec.CPUs,
		PidsLimit:      spec.PidsLimit,
	}
	if p.PidsLimit < 0 {
		p.PidsLimit = 0
	}
	if scale != "" && scale != ScaleBoth {
		p.Scale = scale
	}
	base := spec.MemoryBytes
	if spec.MemoryLimitBytes > 0 {
		base, p.SpecLimitBytes = spec.MemoryLimitBytes, spec.MemoryLimitBytes
	}
	if r.Uncapped {
		return p
	}
	if scale.Memory() {
		// Whole pages keep the engine from rounding behind our back,
		// rounded up: rounded to the nearest, a spec of 200.9M gave 1x a
		// limit 1,638 bytes under its guarantee, which the engine refuses
		// as a reservation (the manifest's docker run line failed: the
		// thirty-fourth attacker's 4).
		// Less a hair, so that floating point's noise is not a page:
		// 200 MiB × 1.1 is 220 MiB, not 220 MiB and 4 KiB.
		p.HardLimitBytes = int64(math.Ceil(float64(base)*r.K/4096-1e-6)) * 4096
	}
	if !scale.CPU() {
		return p
	}
	p.LimitCPUs = spec.CPUs * r.K
	if hostCPUs > 0 && p.LimitCPUs > float64(hostCPUs) {
		p.LimitCPUs = float64(hostCPUs)
		p.CPULimitCapped = true
	}
	return p
}

// LimitString prints the hard limit for people ("192MiB" or "none").
func (p ResourcePolicy) LimitString() string {
	if p.HardLimitBytes == 0 {
		return "none"
	}
	return FormatBytes(p.HardLimitBytes)
}

// CPULimitText is a policy's CPU limit as people read it: "none", "2",
// or "2 (capped from 3)" where the host's CPUs capped the ratio's (spec is
// the task's resources the policy was made from).
func CPULimitText(p ResourcePolicy, spec Resources) string {
	if p.LimitCPUs <= 0 {
		return "none"
	}
	s := strconv.FormatFloat(p.LimitCPUs, 'f', -1, 64)
	if p.CPULimitCapped {
		s += " (capped from " + strconv.FormatFloat(spec.CPUs*p.Ratio.K, 'f', -1, 64) + ")"
	}
	return s
}
