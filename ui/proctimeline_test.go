package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// A killed activity's mark lands at the column of its kill on the
// trial's axis, its bar starts at the column of its start, and the idle
// rest of the row is idle glyphs.
func TestTimelineKillMarkColumn(t *testing.T) {
	start := t0
	r := &model.TrialResult{Start: start, End: start.Add(10 * time.Second)}
	v := &TrialView{Result: r, Activities: []model.Activity{
		{PID: 10, Command: "sh agent.sh", Start: start, End: start.Add(10 * time.Second), PeakRSSBytes: 2 * model.MiB},
		{PID: 11, Command: "python3 -c 'x = bytearray(1 << 30)'", Start: start.Add(2 * time.Second), End: start.Add(7500 * time.Millisecond), OOMKilled: true, PeakRSSBytes: 200 * model.MiB},
	}}
	st := themes.Plain().Styles
	const w = 100
	rows := processTimeline(st, v, w, maxTimelineRows)
	if len(rows) != 3 {
		t.Fatalf("want a header and 2 rows, got:\n%s", strings.Join(rows, "\n"))
	}
	// The killed child has the larger peak: it is drawn first.
	bar := barOf(rows[1], w)
	barW := len([]rune(bar))
	wantKill := 75 * barW / 100 // 7.5 s of 10 s
	wantFrom := 20 * barW / 100
	if got := strings.Index(string([]rune(bar)), killGlyph); got < 0 || len([]rune(bar[:got])) != wantKill {
		t.Errorf("kill mark not at column %d of the bar:\n%q", wantKill, bar)
	}
	if got := []rune(bar); string(got[wantFrom]) != spanGlyph || string(got[wantFrom-1]) != idleGlyph || string(got[wantKill+1]) != idleGlyph {
		t.Errorf("bar should span columns %d..%d:\n%q", wantFrom, wantKill, bar)
	}
	if !strings.HasPrefix(rows[1], "python3 -c") || !strings.HasSuffix(rows[1], " 200M") {
		t.Errorf("row should name the command and its peak: %q", rows[1])
	}
	// The script lived the whole trial, unkilled: a full bar.
	if want := strings.Repeat(spanGlyph, barW); !strings.Contains(rows[2], want) || strings.Contains(rows[2], killGlyph) {
		t.Errorf("script row: %q", rows[2])
	}
	for i, l := range rows {
		if n := width(l); n > w {
			t.Errorf("row %d is %d wide (max %d)", i, n, w)
		}
	}
}

// More activities than rows: the largest are drawn and the rest counted.
func TestTimelineCapsAndCounts(t *testing.T) {
	v := &TrialView{Result: &model.TrialResult{Start: t0, End: t0.Add(time.Second)}}
	for i := range 9 {
		v.Activities = append(v.Activities, model.Activity{PID: i, Command: fmt.Sprintf("cmd%d", i), Start: t0, End: t0.Add(time.Second), PeakRSSBytes: int64(i+1) * model.MiB})
	}
	rows := processTimeline(themes.Plain().Styles, v, 80, 3)
	if len(rows) != 4 || !strings.Contains(rows[0], "+6 more") {
		t.Fatalf("rows:\n%s", strings.Join(rows, "\n"))
	}
	for i, want := range []string{"cmd8", "cmd7", "cmd6"} {
		if !strings.HasPrefix(rows[i+1], want+" ") {
			t.Errorf("row %d = %q, want %s first", i+1, rows[i+1], want)
		}
	}
}

func TestProcessRows(t *testing.T) {
	for _, c := range []struct{ n, room, tl, table int }{
		{0, 20, 0, 0},
		{3, 20, 3, 3},
		{9, 20, 6, 4},
		{9, 12, 6, 4},
		{9, 11, 6, 3},
		{9, 8, 6, 0},
		{9, 5, 4, 0},
		{1, 3, 1, 0},
		{1, 4, 1, 1},
		{9, 1, 0, 0},
	} {
		tl, table := processRows(c.n, c.room)
		if tl != c.tl || table != c.table {
			t.Errorf("processRows(%d, %d) = %d, %d; want %d, %d", c.n, c.room, tl, table, c.tl, c.table)
		}
		if tl+table > 0 && headed(tl)+headed(table) > c.room {
			t.Errorf("processRows(%d, %d) takes %d rows", c.n, c.room, headed(tl)+headed(table))
		}
	}
}

// The detail of a trial whose agent spawned processes, one of them
// OOM-killed: the timeline and the table under the memory chart.
func TestGoldenDetailProcesses(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m, l := withSweep(t, sz.w, sz.h)
			m = update(t, m, eventsMsg{events: activityEvents(l.last.plan)})
			m = keys(t, m, "3", "enter", "enter")
			view := m.View()
			checkFits(t, view, sz.w, sz.h)
			if !strings.Contains(view, "process timeline") || !strings.Contains(view, killGlyph) {
				t.Errorf("no process timeline with a kill mark:\n%s", view)
			}
			golden.RequireEqual(t, []byte(view))
		})
	}
}

// activityEvents gives t0001 (killed at 0.95 s of its 1.2 s) the
// processes its install step spawned, as the process watch reported them.
func activityEvents(plan model.Plan) []event.Event {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	acts := []model.Activity{
		{Step: "install", PID: 40, Command: "sh -c pip install pandas networkx scikit-learn", Start: at(150), End: at(970), PeakRSSBytes: 3 * model.MiB},
		{Step: "install", PID: 41, PPID: 40, Command: "/usr/bin/python3 -m pip install pandas networkx scikit-learn", Start: at(160), End: at(950), OOMKilled: true, PeakRSSBytes: 122 * model.MiB},
		{Step: "install", PID: 42, PPID: 41, Command: "gcc -O2 -c _libs/hashtable.c", Start: at(400), End: at(700), PeakRSSBytes: 41 * model.MiB},
		{Step: "install", PID: 43, PPID: 41, Command: "tar -xzf networkx-3.4.tar.gz", Start: at(300), End: at(380), PeakRSSBytes: 1 * model.MiB},
		{Step: "install", PID: 44, PPID: 41, Command: "cc1 -quiet -O2 _libs/algos.c", Start: at(720), End: at(940), PeakRSSBytes: 38 * model.MiB},
		{Step: "install", PID: 45, PPID: 41, Command: "git rev-parse HEAD", Start: at(200), End: at(230), PeakRSSBytes: 1 * model.MiB},
		{Step: "install", PID: 46, PPID: 41, Command: "uname -m", Start: at(170), End: at(180), PeakRSSBytes: 512 << 10},
		{Step: "verify", PID: 50, Command: "python3 -m pytest tests/test_outputs.py", Start: at(990), End: at(1090), PeakRSSBytes: 6 * model.MiB},
	}
	var evs []event.Event
	for _, t := range plan.Trials {
		if t.ID == "t0001" {
			for _, a := range acts {
				evs = append(evs, event.ActivityStarted{Base: event.Base{Trial: t.ID, Time: a.Start}, Activity: a},
					event.ActivityEnded{Base: event.Base{Trial: t.ID, Time: a.End}, Activity: a})
			}
		}
	}
	return evs
}

// A running activity's bar reaches the newest moment seen, unmarked, and
// a coloured theme keeps every row within the width.
func TestTimelineRunningActivity(t *testing.T) {
	v := &TrialView{Started: t0, Phase: Running,
		Samples:    []event.Sample{{Time: t0}, {Time: t0.Add(4 * time.Second)}},
		Activities: []model.Activity{{PID: 7, Command: "cargo build --release", Start: t0.Add(2 * time.Second), PeakRSSBytes: 300 * model.MiB}}}
	for _, th := range []themes.Theme{themes.Plain(), themes.Dark()} {
		rows := processTimeline(th.Styles, v, 80, maxTimelineRows)
		if len(rows) != 2 {
			t.Fatalf("rows:\n%s", strings.Join(rows, "\n"))
		}
		for i, l := range rows {
			if n := width(l); n > 80 {
				t.Errorf("%s: row %d is %d wide", th.Name, i, n)
			}
		}
		if th.Name != "plain" {
			continue
		}
		bar := []rune(barOf(rows[1], 80))
		if string(bar[len(bar)-1]) != spanGlyph || string(bar[22]) != idleGlyph || string(bar[23]) != spanGlyph {
			t.Errorf("running bar should span the second half to the end: %q", string(bar))
		}
	}
}

// barOf is the bar part of a plain timeline row drawn w wide.
func barOf(row string, w int) string {
	cmdW := min(40, max(12, w/3))
	return string([]rune(row)[cmdW+1 : w-5-1])
}

// The process timeline shares the memory chart's time axis, so a
// process's bar sits under its memory: it ran from the trial's queueing to
// its removal (5.2 s under a chart of 3.9 s in a new user's try).
func TestTimelineSharesTheChartsAxis(t *testing.T) {
	v := &TrialView{Phase: Finished, Result: &model.TrialResult{Start: t0, End: t0.Add(5200 * time.Millisecond)},
		Samples:    []event.Sample{{Time: t0.Add(1300 * time.Millisecond)}, {Time: t0.Add(5200 * time.Millisecond)}},
		Activities: []model.Activity{{PID: 7, Command: "make", Start: t0.Add(2 * time.Second), End: t0.Add(3 * time.Second), PeakRSSBytes: 30 * model.MiB}}}
	start, end := trialSpan(v)
	if !start.Equal(v.Samples[0].Time) || end.Sub(start) != 3900*time.Millisecond {
		t.Errorf("the timeline spans %s from %s, want the chart's 3.9s from its first sample", end.Sub(start), start.Sub(t0))
	}
}
