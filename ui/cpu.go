package ui

import (
	"fmt"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// throttleWindow is how far back the card's throttled share looks: a
// 100 ms CFS period and 20 Hz samples make one sample's share 0 or 100%.
const throttleWindow = 2 * time.Second

// recentCPU is the CPU accounting over the last throttleWindow of
// samples (the cumulative counters' difference); false with fewer than two.
func recentCPU(samples []runner.Sample) (model.CPUUse, bool) {
	n := len(samples)
	if n < 2 {
		return model.CPUUse{}, false
	}
	last := samples[n-1]
	i := n - 2
	for i > 0 && last.Time.Sub(samples[i].Time) < throttleWindow {
		i--
	}
	return last.CPU.Sub(samples[i].CPU), true
}

// throttleText is " thr 40%" while a CPU limit is throttling the trial,
// "" when it has no limit (no periods) or is not throttled.
func throttleText(samples []runner.Sample) string {
	c, ok := recentCPU(samples)
	if !ok || c.Periods == 0 || c.ThrottledPeriods == 0 {
		return ""
	}
	return fmt.Sprintf(" thr %.0f%%", 100*c.ThrottledShare())
}

// stepCPUText is a step's CPU for the detail's step table: average cores
// and, when its limit held it back, the share of periods throttled.
func stepCPUText(s model.StepResult) string {
	if s.CPU == nil {
		return ""
	}
	t := fmt.Sprintf("%.2fc", s.CPU.Cores(s.Duration()))
	if s.CPU.ThrottledNanos > 0 {
		t += fmt.Sprintf(" thr %.0f%%", 100*s.CPU.ThrottledShare())
	}
	return t
}
