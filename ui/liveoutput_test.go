package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// A step printing fast sends its head, a live line now and then, and its
// tail when it ends (runner.emitOutput): the card shows the live line as
// it comes; the detail log has the head, a line saying how much was never
// sent, and the tail — the live line not twice.
func TestLiveOutputIsOnTheCardNotTwiceInTheLog(t *testing.T) {
	tr := model.Trial{ID: "t1", Task: "x", Agent: "a", Ratio: model.Ratio{K: 1}}
	s := NewSweepState(model.Plan{Trials: []model.Trial{tr}}, time.Now())
	b := event.Base{Trial: "t1", Time: time.Now()}
	s.Apply(event.TrialStarted{Base: b})
	s.Apply(event.StepStarted{Base: b, Phase: "agent", Step: model.Step{Name: "yes"}})
	s.Apply(event.OutputLine{Base: b, Step: "yes", Stream: "stdout", Text: "head"})
	s.Apply(event.OutputLine{Base: b, Step: "yes", Stream: "stdout", Text: "y 123456", Live: true})
	if tail := s.Trials["t1"].Tail; !slices.Equal(tail, []string{"head", "y 123456"}) {
		t.Errorf("the card's tail %q, want the live line on it", tail)
	}
	s.Apply(event.OutputLine{Base: b, Step: "yes", Stream: "stdout", Text: "y 123456", Skipped: 49_000_000, SkippedBytes: 98_000_000})
	s.Apply(event.OutputLine{Base: b, Step: "yes", Stream: "stdout", Text: "last"})
	log := strings.Join(s.Trials["t1"].Log, "\n")
	if strings.Count(log, "y 123456") != 1 || !strings.Contains(log, "49000000 line(s), 93.5MiB of this step's output not shown") ||
		strings.Index(log, "head") > strings.Index(log, "not shown") || strings.Index(log, "not shown") > strings.Index(log, "last") {
		t.Errorf("the log:\n%s", log)
	}
}
