package ui

import (
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// The card's throttled share is over the last two seconds of samples, not
// since the start: a trial throttled early and free now shows nothing.
func TestThrottleTextIsRecent(t *testing.T) {
	t0 := time.Unix(0, 0)
	var samples []runner.Sample
	at := func(ms int, periods, throttled int64) {
		samples = append(samples, runner.Sample{Time: t0.Add(time.Duration(ms) * time.Millisecond), CPU: model.CPUUse{Periods: periods, ThrottledPeriods: throttled}})
	}
	at(0, 0, 0)
	at(1000, 10, 8)
	at(3000, 30, 8) // 20 periods since 1s, none throttled
	if got := throttleText(samples); got != "" {
		t.Errorf("free for the last 2s: %q", got)
	}
	at(4000, 40, 13)
	// Back to the newest sample at least 2 s old (1 s): 5 of 30 periods.
	if got := throttleText(samples); got != " thr 17%" {
		t.Errorf("got %q, want thr 17%%", got)
	}
	if throttleText(samples[:1]) != "" || throttleText([]runner.Sample{{}, {}}) != "" {
		t.Error("one sample, or no CPU limit, must show nothing")
	}
	s := model.StepResult{Start: t0, End: t0.Add(2 * time.Second), CPU: &model.CPUUse{UsageNanos: 1e9, Periods: 20, ThrottledPeriods: 10, ThrottledNanos: 5e8}}
	if got := stepCPUText(s); got != "0.50c thr 50%" {
		t.Errorf("step cpu %q", got)
	}
}
