package model

import (
	"fmt"
	"strings"
)

// HarnessContainer is what the task's own harness gives its container
// when that is not the spec as a limit: terminal-bench 1 runs the
// compose file's cpus with no memory limit at all. Zero is no limit.
type HarnessContainer struct {
	CPUs        float64 `json:"cpus,omitempty"`
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
}

func (h HarnessContainer) String() string {
	mem, cpus := "no memory limit", "no CPU limit"
	if h.MemoryBytes > 0 {
		mem = "memory " + FormatBytes(h.MemoryBytes)
	}
	if h.CPUs > 0 {
		cpus = fmt.Sprintf("cpus %g", h.CPUs)
	}
	return cpus + ", " + mem
}

// Reproducing lists the sweeps that give the harness's container: the
// scale and ratio whose limits are the harness's ("--scale cpu --ratios
// 1x"), none when no ratio does.
func (h HarnessContainer) Reproducing(spec Resources) []string {
	var out []string
	found := map[Ratio]bool{}
	for _, s := range []Scale{ScaleBoth, ScaleMemory, ScaleCPU} {
		for _, r := range StandardRatios {
			p := NewScaledPolicy(spec, r, 0, s)
			if p.HardLimitBytes == h.MemoryBytes && p.LimitCPUs == h.CPUs && !found[r] {
				found[r] = true
				flag := "--ratios " + r.String()
				if s != ScaleBoth {
					flag = "--scale " + string(s) + " " + flag
				}
				out = append(out, flag)
			}
		}
	}
	return out
}

// ByDefaultScale says whether a ratio of the default scale (both)
// reproduces the harness's container.
func (h HarnessContainer) ByDefaultScale(spec Resources) bool {
	for _, w := range h.Reproducing(spec) {
		if !strings.HasPrefix(w, "--scale") {
			return true
		}
	}
	return false
}

// HarnessNote says, for a task whose harness runs its container
// otherwise than a ratio's limits, what the harness gives and which
// sweep, if any, reproduces it ("" for a harness that limits as 1x).
func (t *Task) HarnessNote() string {
	if t.Harness == nil {
		return ""
	}
	ways := t.Harness.Reproducing(t.Resources)
	if len(ways) == 0 {
		return fmt.Sprintf("its harness runs %s; no ratio reproduces it", t.Harness)
	}
	return fmt.Sprintf("its harness runs %s; %s reproduces it", t.Harness, strings.Join(ways, " or "))
}
