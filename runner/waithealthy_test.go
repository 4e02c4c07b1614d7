package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// execBox is a sandbox whose Exec answers with the exit codes given, in
// turn (the last again once they run out).
type execBox struct {
	Sandbox
	codes []int
	runs  int
}

func (b *execBox) Exec(ctx context.Context, argv, env []string, user string, line func(string, string)) (ExecResult, error) {
	code := b.codes[min(b.runs, len(b.codes)-1)]
	b.runs++
	return ExecResult{ExitCode: code}, nil
}

// WaitHealthy, which both backends now run before the agent (the
// Kubernetes backend ran no [environment.healthcheck] at all): ready on
// the check's first pass; Retries failures in a row after the start
// period are the environment's failure; the whole wait is bounded.
func TestWaitHealthy(t *testing.T) {
	hc := func(retries int, start time.Duration) model.Healthcheck {
		return model.Healthcheck{Test: []string{"CMD-SHELL", "test -f /ready"}, Interval: time.Millisecond, Retries: retries, StartPeriod: start}
	}
	ctx := context.Background()

	box := &execBox{codes: []int{1, 1, 0}}
	if err := WaitHealthy(ctx, box, hc(3, 0), time.Minute); err != nil || box.runs != 3 {
		t.Errorf("passing on the third run: %v after %d runs", err, box.runs)
	}
	box = &execBox{codes: []int{1}}
	if err := WaitHealthy(ctx, box, hc(2, 0), time.Minute); err == nil || !strings.Contains(err.Error(), "healthcheck failed 2 time(s) in a row (exit 1)") || box.runs != 2 {
		t.Errorf("failing every run, 2 retries: %v after %d runs", err, box.runs)
	}
	box = &execBox{codes: []int{1}}
	err := WaitHealthy(ctx, box, hc(1000000, 0), 20*time.Millisecond)
	if !errors.Is(err, ErrOwnBound) || !strings.Contains(err.Error(), "did not pass within 20ms") {
		t.Errorf("a check failing for ever under a bound: %v", err)
	}
	// Failures in the start period do not count.
	box = &execBox{codes: []int{1, 1, 1, 1, 0}}
	if err := WaitHealthy(ctx, box, hc(1, time.Hour), time.Minute); err != nil {
		t.Errorf("failures in the start period counted: %v after %d runs", err, box.runs)
	}
	// No check, no wait.
	if err := WaitHealthy(ctx, &execBox{codes: []int{1}}, model.Healthcheck{}, time.Minute); err != nil {
		t.Errorf("no command: %v", err)
	}
}
