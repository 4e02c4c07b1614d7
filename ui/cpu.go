package ui

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// throttleWindow is how far back the card's throttled share looks: a
// 100 ms CFS period and 20 Hz samples make one sample's share 0 or 100%.
const throttleWindow = 2 * time.Second

// recentCPU is the CPU accounting over the last throttleWindow of
// samples (the cumulative counters' difference); false with fewer than two.
func recentCPU(samples []event.Sample) (model.CPUUse, bool) {
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
func throttleText(samples []event.Sample) string {
	c, ok := recentCPU(samples)
	if !ok || c.Periods == 0 || c.ThrottledPeriods == 0 {
		return ""
	}
	return fmt.Sprintf(" thr %.0f%%", 100*c.ThrottledShare())
}

// stepCPUText is a step's CPU for the detail's step table: average cores
// and, when its limit held it back, the share of periods throttled. A step
// shorter than model.MinCPUStep shows "—": its CPU time over its wall time
// is the exec's and a clock tick's, not a use (an instant echo read
// 37.20c), as calibrate does not read it either.
func stepCPUText(s model.StepResult) string {
	if s.CPU == nil {
		return ""
	}
	if s.Duration() < model.MinCPUStep {
		return "—"
	}
	t := fmt.Sprintf("%.2fc", s.CPU.Cores(s.Duration()))
	if s.CPU.ThrottledNanos > 0 {
		t += fmt.Sprintf(" thr %.0f%%", 100*s.CPU.ThrottledShare())
	}
	return t
}

// throttleLevels draw a column's throttled share in eighths; a column
// that ran unthrottled is a dot, so "free" reads apart from "no data"
// without colour.
var throttleLevels = []rune("·▁▂▃▄▅▆▇█")

// stripWindow is the least time a strip column's share is taken over:
// a column narrower than a few 100 ms periods would read 0 or 100%.
const stripWindow = time.Second

// throttleStrip is the trial's throttled share over time, one column per
// cols-th of [start, start+span): each column the share of CFS periods
// throttled over the column, widened about its middle to stripWindow
// (the counters' difference between the window's edges). most is the largest
// column's share; ok is false when the samples carry no periods (no CPU
// limit, or a sampler that cannot read the counters).
func throttleStrip(samples []event.Sample, start time.Time, span time.Duration, cols int) (strip string, most float64, ok bool) {
	if cols < 1 || len(samples) < 2 || samples[len(samples)-1].CPU.Periods == 0 {
		return "", 0, false
	}
	// at is the counters at t: the last sample at or before it.
	at := func(t time.Time) (model.CPUUse, bool) {
		i := sort.Search(len(samples), func(i int) bool { return samples[i].Time.After(t) })
		if i == 0 {
			return model.CPUUse{}, false
		}
		return samples[i-1].CPU, true
	}
	var b strings.Builder
	for i := 0; i < cols; i++ {
		from := start.Add(span * time.Duration(i) / time.Duration(cols))
		to := start.Add(span * time.Duration(i+1) / time.Duration(cols))
		if !from.Before(samples[len(samples)-1].Time) {
			b.WriteRune(' ')
			continue
		}
		if widen := stripWindow - to.Sub(from); widen > 0 {
			from, to = from.Add(-widen/2), to.Add(widen/2)
		}
		a, okA := at(from)
		z, okZ := at(to)
		if !okZ {
			b.WriteRune(' ')
			continue
		}
		if !okA {
			a = samples[0].CPU
		}
		d := z.Sub(a)
		if d.Periods == 0 || d.ThrottledPeriods == 0 {
			b.WriteRune(throttleLevels[0])
			continue
		}
		share := d.ThrottledShare()
		most = max(most, share)
		b.WriteRune(throttleLevels[min(max(int(math.Ceil(share*8)), 1), 8)])
	}
	return b.String(), most, true
}
