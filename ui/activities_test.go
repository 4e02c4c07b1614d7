package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// The card's current line names the newest running activity under the
// step; when it ends, the one before it (still running) is shown again,
// and the detail lists them with their peaks, the killed one marked.
func TestCardShowsTheRunningActivity(t *testing.T) {
	tr := model.Trial{ID: "t1", Task: "x", Agent: "a", Ratio: model.Ratio{K: 1}, Policy: model.ResourcePolicy{GuaranteeBytes: 256 * model.MiB, HardLimitBytes: 256 * model.MiB}}
	s := NewSweepState(model.Plan{Trials: []model.Trial{tr}}, time.Now())
	t0 := time.Now()
	s.Apply(event.TrialStarted{Base: event.Base{Trial: "t1", Time: t0}})
	s.Apply(event.StepStarted{Base: event.Base{Trial: "t1", Time: t0}, Phase: "agent", Step: model.Step{Name: "sh agent.sh", Show: "sh agent.sh"}})
	script := model.Activity{Step: "sh agent.sh", PID: 10, Command: "sh agent.sh", Start: t0, PeakRSSBytes: 2 * model.MiB}
	child := model.Activity{Step: "sh agent.sh", PID: 11, PPID: 10, Command: "python3 -c 'x = bytearray(1 << 30)'", Start: t0.Add(time.Second), PeakRSSBytes: 200 * model.MiB}
	s.Apply(event.ActivityStarted{Base: event.Base{Trial: "t1", Time: t0}, Activity: script})
	s.Apply(event.ActivityStarted{Base: event.Base{Trial: "t1", Time: t0}, Activity: child})
	st := themes.Plain().Styles
	c := cardCtx{st: st, p: newPaints(st), now: t0.Add(2 * time.Second), height: cardHeight}
	v := s.Trials["t1"]
	if card := renderCard(c, v, 80); !strings.Contains(card, "↳ python3 -c 'x = bytearray(1 << 30)'") {
		t.Errorf("the card does not show the running child:\n%s", card)
	}
	child.End, child.OOMKilled = t0.Add(3*time.Second), true
	s.Apply(event.ActivityEnded{Base: event.Base{Trial: "t1", Time: t0}, Activity: child})
	if a := v.CurrentActivity(); a == nil || a.PID != 10 {
		t.Errorf("current activity %+v, want the script again", a)
	}
	rows := strings.Join(activityRows(st, v, 100, maxActivityRows), "\n")
	if !strings.Contains(rows, "python3 -c") || !strings.Contains(rows, "killed") || !strings.Contains(rows, "200M") {
		t.Errorf("detail rows:\n%s", rows)
	}
}

// A process's command holding wide characters (two columns each) keeps
// its time, peak and step under their headers: the command is padded by
// columns, not by runes.
func TestActivityRowsPadWideCommandsByColumns(t *testing.T) {
	t0 := time.Now()
	v := &TrialView{Ended: t0.Add(5 * time.Second), Activities: []model.Activity{
		{Step: "agent", PID: 10, Command: "python3 日本語日本語日本語日本語日本語日本語日本語", Start: t0, End: t0.Add(2 * time.Second), PeakRSSBytes: 300 * model.MiB},
		{Step: "agent", PID: 11, Command: "sh plain", Start: t0, End: t0.Add(2 * time.Second), PeakRSSBytes: 100 * model.MiB},
	}}
	rows := activityRows(themes.Plain().Styles, v, 100, maxActivityRows)
	if len(rows) < 3 {
		t.Fatalf("rows:\n%s", strings.Join(rows, "\n"))
	}
	col := func(line, what string) int { return width(line[:strings.Index(line, what)]) }
	head := col(rows[0], "peak")
	for _, r := range rows[1:] {
		m := "300M"
		if strings.Contains(r, "plain") {
			m = "100M"
		}
		if got := col(r, m) + len(m); got != head+len("peak") {
			t.Errorf("row %q: its peak ends at column %d, the header's at %d", r, got, head+len("peak"))
		}
	}
}

// The detail's process table is largest first, as its title says: it
// listed the largest in the order they started (32M above 35M).
func TestActivityRowsLargestFirst(t *testing.T) {
	acts := []model.Activity{{Command: "cc a", PeakRSSBytes: 30 << 20}, {Command: "cc b", PeakRSSBytes: 32 << 20}, {Command: "cc c", PeakRSSBytes: 35 << 20}, {Command: "cc d", PeakRSSBytes: 30 << 20}}
	got := largestActivities(acts, 3)
	var names []string
	for _, a := range got {
		names = append(names, a.Command)
	}
	if strings.Join(names, ",") != "cc c,cc b,cc a" {
		t.Errorf("largest three: %v, want cc c, cc b, cc a (largest first; a tie in start order)", names)
	}
}
