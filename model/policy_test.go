package model

import (
	"strings"
	"testing"
)

func TestNewPolicyForEveryStandardRatio(t *testing.T) {
	spec := Resources{CPUs: 1, MemoryBytes: 128 * MiB, PidsLimit: 256}
	tests := []struct {
		r         Ratio
		limit     int64
		cpus      float64
		cpuCapped bool
	}{
		{Ratio{K: 1}, 128 * MiB, 1, false},
		{Ratio{K: 1.5}, 192 * MiB, 1.5, false},
		{Ratio{K: 2}, 256 * MiB, 2, false},
		{Ratio{K: 3}, 384 * MiB, 2, true}, // 3 CPUs on a 2-CPU host
		{Ratio{K: 5}, 640 * MiB, 2, true},
		{Uncapped, 0, 0, false},
	}
	for _, tt := range tests {
		p := NewPolicy(spec, tt.r, 2)
		if p.GuaranteeBytes != 128*MiB || p.GuaranteeCPUs != 1 {
			t.Errorf("%s: guarantee %d/%v, want the spec", tt.r, p.GuaranteeBytes, p.GuaranteeCPUs)
		}
		if p.HardLimitBytes != tt.limit || p.LimitCPUs != tt.cpus || p.CPULimitCapped != tt.cpuCapped {
			t.Errorf("%s: limit %d cpus %v capped %v; want %d %v %v", tt.r, p.HardLimitBytes, p.LimitCPUs, p.CPULimitCapped, tt.limit, tt.cpus, tt.cpuCapped)
		}
		if p.PidsLimit != 256 {
			t.Errorf("%s: pids %d", tt.r, p.PidsLimit)
		}
	}
}

func TestPolicyLimitIsWholePages(t *testing.T) {
	p := NewPolicy(Resources{CPUs: 1, MemoryBytes: 100*MiB + 1}, Ratio{K: 1.5}, 0)
	if p.HardLimitBytes%4096 != 0 {
		t.Errorf("limit %d is not page aligned", p.HardLimitBytes)
	}
	// Never under the guarantee, which the engine takes as a reservation
	// no larger than the limit: 200.9M at 1x was rounded 1,638 bytes
	// under it (the thirty-fourth attacker's 4).
	if p := NewPolicy(Resources{CPUs: 1, MemoryBytes: 200 * MiB}, Ratio{K: 1.1}, 0); p.HardLimitBytes != 220*MiB {
		t.Errorf("200 MiB at 1.1x: limit %d, want 220 MiB exactly (floating point's noise is no page)", p.HardLimitBytes)
	}
	for _, spec := range []int64{210658918, 100*MiB + 1, 64*MiB - 1} {
		for _, k := range []float64{1, 1.5, 2, 3} {
			p := NewPolicy(Resources{CPUs: 1, MemoryBytes: spec}, Ratio{K: k}, 0)
			if p.HardLimitBytes < p.GuaranteeBytes || p.HardLimitBytes%4096 != 0 || float64(p.HardLimitBytes) < float64(spec)*k {
				t.Errorf("spec %d at %gx: limit %d under the guarantee %d or the ratio's %g, or not whole pages", spec, k, p.HardLimitBytes, p.GuaranteeBytes, float64(spec)*k)
			}
		}
	}
}

// A scale limits only what it names; the other resource keeps its
// guarantee and no hard limit. Both is the old behaviour and records no
// scale.
func TestScaledPolicy(t *testing.T) {
	spec := Resources{MemoryBytes: 100 * MiB, CPUs: 0.5}
	k2 := Ratio{K: 2}
	both := NewScaledPolicy(spec, k2, 4, ScaleBoth)
	if both != NewPolicy(spec, k2, 4) || both.Scale != "" || both.HardLimitBytes != 200*MiB || both.LimitCPUs != 1 {
		t.Errorf("both: %+v", both)
	}
	mem := NewScaledPolicy(spec, k2, 4, ScaleMemory)
	if mem.HardLimitBytes != 200*MiB || mem.LimitCPUs != 0 || mem.GuaranteeCPUs != 0.5 || mem.Scale != ScaleMemory {
		t.Errorf("memory: %+v", mem)
	}
	cpu := NewScaledPolicy(spec, k2, 4, ScaleCPU)
	if cpu.HardLimitBytes != 0 || cpu.GuaranteeBytes != 100*MiB || cpu.LimitCPUs != 1 || cpu.Scale != ScaleCPU {
		t.Errorf("cpu: %+v", cpu)
	}
	for in, want := range map[string]Scale{"": ScaleBoth, "both": ScaleBoth, "memory": ScaleMemory, "cpu": ScaleCPU} {
		if got, err := ParseScale(in); err != nil || got != want {
			t.Errorf("ParseScale(%q) = %q %v", in, got, err)
		}
	}
	if _, err := ParseScale("disk"); err == nil || !strings.Contains(err.Error(), "memory, cpu or both") {
		t.Errorf("ParseScale(disk): %v", err)
	}
}

// terminal-bench 1's harness: the compose file's cpus, no memory limit.
// No ratio of the default scale gives that; the CPU scale at 1x does.
func TestHarnessContainerReproducing(t *testing.T) {
	spec := Resources{CPUs: 1, MemoryBytes: DefaultMemoryBytes}
	cases := []struct {
		h    HarnessContainer
		want string
		def  bool
	}{
		{HarnessContainer{CPUs: 1}, "--scale cpu --ratios 1x", false},
		{HarnessContainer{}, "--ratios uncapped", true},
		{HarnessContainer{CPUs: 1, MemoryBytes: DefaultMemoryBytes}, "--ratios 1x", true},
		{HarnessContainer{CPUs: 4}, "", false},
	}
	for _, c := range cases {
		got := strings.Join(c.h.Reproducing(spec), " or ")
		if got != c.want || c.h.ByDefaultScale(spec) != c.def {
			t.Errorf("%s: %q (default scale %v), want %q (%v)", c.h, got, c.h.ByDefaultScale(spec), c.want, c.def)
		}
	}
}
