package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// A trial killed from outside shows the cause's glyph in the matrix, its
// legend and the count from outside, and the cause's banner on its card.
func TestCauseShowsInTheMatrixAndOnTheCard(t *testing.T) {
	m, _ := withSweep(t, 140, 44)
	var tr model.Trial
	for _, x := range m.state.Plan.Trials {
		if x.ID == "t0003" {
			tr = x
		}
	}
	end := model.TrialResult{Trial: tr, Outcome: model.InfraError, Cause: model.CauseKilledOutside,
		Reason: "killed from outside with SIGKILL during step install", Start: t0, End: t0.Add(2 * time.Second)}
	m = update(t, m, eventsMsg{events: []event.Event{event.TrialEnded{Base: event.Base{Trial: "t0003", Time: t0.Add(2 * time.Second)}, Result: end}}})
	matrix := keys(t, m, "3").View()
	for _, want := range []string{"KS", model.CauseKilledOutside.Glyph() + " killed from outside", "from outside"} {
		if !strings.Contains(matrix, want) {
			t.Errorf("matrix lacks %q:\n%s", want, matrix)
		}
	}
	live := keys(t, m, "2").View()
	if !strings.Contains(live, model.CauseKilledOutside.Banner("")) {
		t.Errorf("the card lacks the cause's banner %q:\n%s", model.CauseKilledOutside.Banner(""), live)
	}
}
