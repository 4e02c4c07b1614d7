package ui

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
	"github.com/muesli/termenv"
)

// demoConsole is the console running the showcase's shape (three ratios
// side by side, label demo) on a clock the test moves.
func demoConsole(t *testing.T, w, h int, now *time.Time) (Model, model.Plan) {
	t.Helper()
	return demoConsoleRepeats(t, w, h, now, 3)
}

// demoConsoleRepeats is demoConsole with that many repeats.
func demoConsoleRepeats(t *testing.T, w, h int, now *time.Time, repeats int) (Model, model.Plan) {
	t.Helper()
	l := &fakeLauncher{}
	opts := testOptions(t, l)
	opts.Now = func() time.Time { return *now }
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}, {K: 3}, model.Uncapped}, Repeats: repeats, Concurrency: 3, Seed: 1, Label: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	return m, sw.Plan()
}

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func started(tr model.Trial, ms int, wsMB int64) []event.Event {
	b := event.Base{Trial: tr.ID, Time: at(ms)}
	return []event.Event{event.TrialStarted{Base: b, ContainerID: "c-" + tr.ID, SampleSource: "cgroup-v1"},
		event.StepStarted{Base: b, Phase: "agent", Step: model.Step{Name: "install", Show: "pip install pandas"}},
		event.MemorySample{Base: b, Sample: event.Sample{Time: at(ms), WorkingSetBytes: wsMB << 20}}}
}

func ended(tr model.Trial, ms int, o model.Outcome) event.Event {
	r := model.TrialResult{Trial: tr, Outcome: o, Start: at(0), End: at(ms)}
	if o == model.OOMKilled {
		r.OOMs = []model.OOMEvent{{At: at(ms - 10), Step: "install", WorkingSetBytes: 127 << 20}}
	}
	return event.TrialEnded{Base: event.Base{Trial: tr.ID, Time: at(ms)}, Result: r}
}

// column is the screen column where the card with this title starts
// (its top-left corner), -1 if absent.
func column(view, title string) int {
	for _, l := range strings.Split(view, "\n") {
		if i := strings.Index(l, title); i >= 0 {
			r := []rune(l[:i])
			for j := len(r) - 1; j >= 0; j-- {
				if r[j] == '╭' || r[j] == '┏' {
					return j
				}
			}
		}
	}
	return -1
}

// cornerColumns are the screen columns where text starts on the first
// line that has it, left to right; nil if absent.
func cornerColumns(view, text string) []int {
	for _, l := range strings.Split(view, "\n") {
		var out []int
		for off := 0; ; {
			i := strings.Index(l[off:], text)
			if i < 0 {
				break
			}
			out = append(out, len([]rune(l[:off+i])))
			off += i + len(text)
		}
		if out != nil {
			return out
		}
	}
	return nil
}

// In the demo each ratio keeps its column as trials start and end: the
// uncapped card does not move when the 3x one ends and the next 3x starts.
func TestDemoRatiosKeepTheirColumns(t *testing.T) {
	for _, sz := range sizes {
		now := at(1000)
		m, plan := demoConsole(t, sz.w, sz.h, &now)
		byID := map[string]model.Trial{}
		for _, tr := range plan.Trials {
			byID[tr.ID] = tr
		}
		// Plan order: r1 at 1x, 3x, uncapped = t0001..t0003, r2 = t0004..
		var evs []event.Event
		evs = append(evs, started(byID["t0001"], 0, 100)...)
		evs = append(evs, started(byID["t0002"], 0, 100)...)
		evs = append(evs, started(byID["t0003"], 0, 100)...)
		m = update(t, m, eventsMsg{events: evs})
		v := m.View()
		c1, c3, cu := column(v, " 1x · heavy"), column(v, " 3x · heavy"), column(v, " uncapped · ")
		if !(c1 >= 0 && c1 < c3 && c3 < cu) {
			t.Fatalf("%dx%d: columns 1x %d, 3x %d, uncapped %d:\n%s", sz.w, sz.h, c1, c3, cu, v)
		}
		// 1x is killed, 3x passes; the next 1x and 3x
		// start. Nobody moves sideways.
		now = at(3000)
		evs = []event.Event{ended(byID["t0001"], 2500, model.OOMKilled), ended(byID["t0002"], 2600, model.Passed)}
		evs = append(evs, started(byID["t0004"], 2700, 20)...)
		m = update(t, m, eventsMsg{events: evs})
		now = at(2600 + int(cardLinger/time.Millisecond) + 500)
		evs = started(byID["t0005"], 7000, 20)
		m = update(t, m, eventsMsg{events: evs})
		v = m.View()
		if got := column(v, " uncapped · "); got != cu {
			t.Errorf("%dx%d: the uncapped card moved from column %d to %d:\n%s", sz.w, sz.h, cu, got, v)
		}
		// The pass holds the 3x cell as a kill would; the next 3x waits
		// in its corner.
		if got := column(v, " 3x · heavy"); got != c3 {
			t.Errorf("%dx%d: the passed 3x card is at column %d, the 3x column is %d:\n%s", sz.w, sz.h, got, c3, v)
		}
		if got := cornerColumns(v, "next › heavy · repeat 2"); len(got) != 2 || got[1] < c3 || got[1] >= cu {
			t.Errorf("%dx%d: the next 3x trial is at column %d, not in the 3x cell [%d, %d):\n%s", sz.w, sz.h, got, c3, cu, v)
		}
		// The kill is still on screen (it lingers 10 s), in the 1x column.
		if got := column(v, " 1x · heavy"); got != c1 {
			t.Errorf("%dx%d: the killed 1x card is at %d, want %d:\n%s", sz.w, sz.h, got, c1, v)
		}
		// The next 1x waits in the corner of the 1x cell.
		if got := cornerColumns(v, "next › heavy · repeat 2"); len(got) != 2 || got[0] < c1 || got[0] >= c3 {
			t.Errorf("%dx%d: the next 1x trial is at column %d, not in the 1x cell [%d, %d):\n%s", sz.w, sz.h, got, c1, c3, v)
		}
		checkFits(t, v, sz.w, sz.h)
	}
}

// A killed card stays at least 10 s after its trial ended, even when the
// ratio's next trial has ended since, which then takes the cell; with
// nothing newer it stays (the cell holds its ratio's latest word).
func TestKilledCardLingersTenSeconds(t *testing.T) {
	now := at(1000)
	m, plan := demoConsole(t, 120, 40, &now)
	var one []model.Trial
	for _, tr := range plan.Trials {
		if tr.Ratio == (model.Ratio{K: 1}) {
			one = append(one, tr)
		}
	}
	tr, next := one[0], one[1]
	m = update(t, m, eventsMsg{events: append(started(tr, 0, 100), ended(tr, 1000, model.OOMKilled))})
	m.View() // a frame drawn with the kill on the stage
	now = at(1000 + 9500)
	m = update(t, m, eventsMsg{events: append(started(next, 1100, 50), ended(next, 5000, model.Passed))})
	if trialCard(m.View(), tr) == nil {
		t.Errorf("the killed card went before 10 s:\n%s", m.View())
	}
	now = at(1000 + 10500)
	if v := m.View(); trialCard(v, tr) != nil || trialCard(v, next) == nil {
		t.Errorf("the killed card outstayed 10 s with a newer trial ended:\n%s", v)
	}
	now = at(60000)
	if v := m.View(); trialCard(v, next) == nil {
		t.Errorf("the ratio's latest trial left its cell:\n%s", v)
	}
}

// An uncapped gauge is drawn against the largest limit on screen, says
// so, and is not drawn against host memory.
func TestUncappedGaugeIsScaledToTheLargestLimitShown(t *testing.T) {
	now := at(1000)
	m, plan := demoConsole(t, 120, 40, &now)
	var evs []event.Event
	for i, mb := range []int64{120, 150, 192} {
		evs = append(evs, started(plan.Trials[i], 0, mb)...)
	}
	m = update(t, m, eventsMsg{events: evs})
	v := m.View()
	if !strings.Contains(v, "bar to 384M") {
		t.Fatalf("the uncapped card should say its bar is drawn to the 3x limit, 384M:\n%s", v)
	}
	// 192M of 384M: half the uncapped gauge is filled.
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		if j := strings.Index(l, " uncapped · "); j >= 0 {
			j++
			g := []rune(lines[i+1])
			start := len([]rune(l[:j])) - 3 // the box's corner and "─ "
			filled := 0
			for _, r := range g[start+1:] {
				if r == '█' {
					filled++
				}
			}
			inner := width(l) - start - 2
			if inner/2-filled > 2 || filled-inner/2 > 2 {
				t.Errorf("192M of 384M filled %d of ~%d cells:\n%s", filled, inner, v)
			}
		}
	}
}

// The working set turns to the warning colour near the limit and to the
// OOM colour at it; an uncapped gauge never does.
func TestGaugeChangesColourNearTheLimit(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	st := themes.Dark().Styles
	p := newPaints(st)
	colour := func(ws, limit int64) string {
		g := gauge(p, ws, 0, 64<<20, limit, 128<<20, 40)
		return g[:strings.Index(g, "█")]
	}
	low, near, at := colour(40<<20, 128<<20), colour(100<<20, 128<<20), colour(126<<20, 128<<20)
	if low == near || near == at || low == at {
		t.Errorf("gauge colours at 31%%, 78%%, 98%% of the limit: %q %q %q", low, near, at)
	}
	if want := st.Warn.Render("█"); !strings.HasPrefix(want, near) {
		t.Errorf("near the limit the gauge should use the Warn role: %q vs %q", near, want)
	}
	if colour(126<<20, 0) != low {
		t.Error("an uncapped gauge changed colour")
	}
	if ansi.Strip(gauge(p, 126<<20, 0, 64<<20, 128<<20, 128<<20, 40)) == "" {
		t.Error("empty gauge")
	}
}

// Three trials on 120×40 use the height: cards taller than the standard
// card, with a memory chart of several rows.
func TestFewCardsUseTheHeight(t *testing.T) {
	now := at(5000)
	m, plan := demoConsole(t, 120, 40, &now)
	var evs []event.Event
	for i := range 3 {
		tr := plan.Trials[i]
		for ms := 0; ms <= 5000; ms += 250 {
			evs = append(evs, event.MemorySample{Base: event.Base{Trial: tr.ID, Time: at(ms)}, Sample: event.Sample{Time: at(ms), WorkingSetBytes: int64(ms/50) << 20}})
		}
		evs = append(started(tr, 0, 1), evs...)
	}
	m = update(t, m, eventsMsg{events: evs})
	w, h := m.bodySize()
	g := liveCards(m.common(), w, h)
	if g.height < 40-4-2 {
		t.Errorf("three cards on 120x40 are %d lines tall", g.height)
	}
	v := m.View()
	rows := 0
	for _, l := range strings.Split(v, "\n") {
		if strings.ContainsAny(l, "▁▂▃▄▅▆▇") || strings.Count(l, "█") > 2 && !strings.Contains(l, "░") {
			rows++
		}
	}
	if rows < 4 {
		t.Errorf("the memory chart has %d rows:\n%s", rows, v)
	}
}

// `s` prints where the shell is and how to come back before it starts.
func TestShellBannerSaysWhereAndHowBack(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	v := m.state.Trials["t0003"]
	var out strings.Builder
	c := &bannerCmd{Cmd: exec.Command("sh", "-c", "echo inside"), banner: shellBanner(v)}
	c.SetStdout(&out)
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"a shell in trial t0003", "builtin/bn-fit-modify · heavy at 1x, repeat 2", "container c0ffee0003cc", "128MiB counts this shell too", "Type exit or press ctrl+d to return to the console", "inside"} {
		if !strings.Contains(got, want) {
			t.Errorf("banner lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "Type exit") > strings.Index(got, "inside") {
		t.Error("the banner must come before the shell's own output")
	}
}

// A kill known only from the verdict (the engine's OOMKilled flag, no
// kill event caught) still makes a kill card that stays 10 s.
func TestVerdictOnlyKillCardLingers(t *testing.T) {
	now := at(1000)
	m, plan := demoConsole(t, 120, 40, &now)
	tr := plan.Trials[0]
	r := model.TrialResult{Trial: tr, Outcome: model.OOMKilled, Start: at(0), End: at(1000), StateOOMKilled: true, KilledInStep: "install", PeakWorkingSetBytes: 127 << 20}
	m = update(t, m, eventsMsg{events: append(started(tr, 0, 100), event.TrialEnded{Base: event.Base{Trial: tr.ID, Time: at(1000)}, Result: r})})
	now = at(1000 + 9000)
	if v := m.View(); !strings.Contains(v, "OOM KILLED in install at 127M / 128M") {
		t.Errorf("the verdict-only kill card went before 10 s or has no banner:\n%s", v)
	}
}

// The line above the cards says what they are, so that its counts and
// the cards agree: "running 2 · queued 15" above three cards read as a
// miscount. A grid with more running than fit counts those off screen.
func TestLiveLineSaysWhatTheCardsAre(t *testing.T) {
	now := at(1000)
	m, _ := demoConsole(t, 120, 40, &now)
	if line := strings.Split(m.View(), "\n")[2]; !strings.Contains(line, "a card a ratio") {
		t.Errorf("by ratio, the line does not say a card is a ratio's: %q", line)
	}

	l := &fakeLauncher{}
	opts := testOptions(t, l)
	opts.Now = func() time.Time { return now }
	m = update(t, New(opts), tea.WindowSizeMsg{Width: 80, Height: 24})
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}, {K: 3}}, Repeats: 8, Concurrency: 12, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	var evs []event.Event
	for _, tr := range sw.Plan().Trials[:12] {
		evs = append(evs, started(tr, 0, 10)...)
	}
	m = update(t, m, eventsMsg{events: evs})
	w, h := m.bodySize()
	shown := len(liveCards(m.common(), w, h).cards())
	line := strings.Split(m.View(), "\n")[2]
	want := fmt.Sprintf("running 12 · queued 4 · %s, %d running off screen", model.Quantity(shown, "card"), 12-shown)
	if shown >= 12 || !strings.Contains(line, want) {
		t.Errorf("%d cards of 12 running on 80x24; the line %q, want %q", shown, line, want)
	}
}

// The live eta is the preview's estimate, paced by the finished trials:
// before any ends it is the preview's own figure (the live screen's
// first eta read 2m12s beside a preview of 50 s), and a trial that took
// twice its estimate doubles what is left.
func TestETAIsThePreviewsEstimatePaced(t *testing.T) {
	now := at(0)
	m, plan := demoConsole(t, 120, 40, &now)
	c := m.common()
	task := heavyOnly(t)
	est := trialEstimate(task, plan.Trials[0].Agent)
	if est <= 0 {
		t.Fatalf("the showcase's heavy agent has no estimate")
	}
	estimate := func(tr model.Trial) time.Duration { return trialEstimate(task, tr.Agent) }
	n := len(plan.Trials)
	if got, want := c.State.ETA(now, 3, estimate), (time.Duration(n) * est / 3).Round(time.Second); got != want {
		t.Errorf("before any trial: eta %s, want the preview's %s", got, want)
	}
	// A kill ends early: it does not pace the rest.
	killed := plan.Trials[1]
	m = update(t, m, eventsMsg{events: append(started(killed, 0, 10), ended(killed, int(est/10/time.Millisecond), model.OOMKilled))})
	if got, want := m.common().State.ETA(now, 3, estimate), (time.Duration(n-1) * est / 3).Round(time.Second); got != want {
		t.Errorf("after a kill: eta %s, want %s (the estimate of the rest, unpaced)", got, want)
	}
	ms := int(2 * est / time.Millisecond)
	tr := plan.Trials[0]
	m = update(t, m, eventsMsg{events: append(started(tr, 0, 10), ended(tr, ms, model.Passed))})
	now = at(ms)
	want := (time.Duration(n-2) * 2 * est / 3).Round(time.Second)
	if got := m.common().State.ETA(now, 3, estimate); got < want-time.Second || got > want+time.Second {
		t.Errorf("after a trial took twice its estimate: eta %s, want about %s", got, want)
	}
}

// multiTaskConsole is the console on a sweep of two tasks at five ratios,
// concurrency 2, on 120x40: more trials than fit in a cell a ratio, so
// the cards fill a grid.
func multiTaskConsole(t *testing.T, now *time.Time) (Model, model.Plan) {
	t.Helper()
	l := &fakeLauncher{}
	opts := testOptions(t, l)
	opts.Now = func() time.Time { return *now }
	m := update(t, New(opts), tea.WindowSizeMsg{Width: 120, Height: 40})
	var tasks []model.Task
	for _, task := range builtinTasks(t) {
		if task.Name == "builtin/compile-project" || task.Name == "builtin/swe-edit" {
			tasks = append(tasks, task)
		}
	}
	sw, err := l.Launch(LaunchSpec{Tasks: tasks, Ratios: []model.Ratio{{K: 1}, {K: 1.5}, {K: 2.5}, {K: 3}, model.Uncapped}, Repeats: 1, Concurrency: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	if g := liveLayout(m.common(), 120, 38); g.byRatio {
		t.Fatal("the sweep is laid out a cell a ratio; the test wants a grid")
	}
	return m, sw.Plan()
}

// The cursor is on a trial, not on a place: when a card comes in before
// it (cards are in plan order), enter opens the trial the cursor was on.
// A new user's enter on a 1x kill opened the uncapped trial that had
// moved under the cursor's place.
func TestLiveCursorFollowsItsTrial(t *testing.T) {
	now := at(1000)
	m, plan := multiTaskConsole(t, &now)
	a, b, earlier := plan.Trials[3], plan.Trials[4], plan.Trials[0]
	m = update(t, m, eventsMsg{events: append(started(a, 0, 10), started(b, 0, 10)...)})
	m = keys(t, m, "right") // onto b
	m = update(t, m, eventsMsg{events: started(earlier, 500, 10)})
	m = keys(t, m, "enter")
	if m.detail.v == nil || m.detail.v.Trial.ID != b.ID {
		got := "nothing"
		if m.detail.v != nil {
			got = m.detail.v.Trial.ID
		}
		t.Errorf("enter opened %s, want %s (the trial the cursor was on)", got, b.ID)
	}
}

// x asks before it stops a trial, naming it whole: a new user's y on
// "Stop trial t0004?" stopped lean · 1x where they had meant the 3x card
// (cards move as trials start and end).
func TestLiveStopNamesItsTrial(t *testing.T) {
	now := at(1000)
	m, plan := multiTaskConsole(t, &now)
	a, b := plan.Trials[3], plan.Trials[4]
	m = update(t, m, eventsMsg{events: append(started(a, 0, 10), started(b, 0, 10)...)})
	m = keys(t, m, "right", "x") // onto b
	want := fmt.Sprintf("Stop trial %s (%s · %s · %s · repeat %d)?", b.ID, b.Task, b.Agent, b.Ratio, b.Repeat)
	if m.confirm == nil || !strings.Contains(m.confirm.prompt, want) {
		got := "no prompt"
		if m.confirm != nil {
			got = m.confirm.prompt
		}
		t.Errorf("x asked %q, want it to hold %q", got, want)
	}
}

// A sweep of several tasks names each card's task: cards read "3x · agent
// · repeat 1" and a killed card's task could not be told.
func TestLiveCardsNameTheirTask(t *testing.T) {
	now := at(1000)
	m, plan := multiTaskConsole(t, &now)
	var evs []event.Event
	for _, tr := range plan.Trials[:2] {
		evs = append(evs, started(tr, 0, 10)...)
	}
	m = update(t, m, eventsMsg{events: evs})
	for _, w := range []int{120, 80} {
		m = update(t, m, tea.WindowSizeMsg{Width: w, Height: 40})
		v := m.View()
		for _, tr := range plan.Trials[:2] {
			if name := strings.TrimPrefix(tr.Task, "builtin/"); !strings.Contains(v, name) {
				t.Errorf("%d columns: no card names %s's task %q:\n%s", w, tr.ID, name, v)
			}
		}
	}
}

// With no card on screen the line above the cards ended in a stray
// separator: "running 0 · queued 0 ·".
func TestLiveLineHasNoStraySeparator(t *testing.T) {
	now := at(1000)
	m, plan := multiTaskConsole(t, &now)
	var evs []event.Event
	for _, tr := range plan.Trials {
		evs = append(evs, ended(tr, 2000, model.Passed))
	}
	m = update(t, m, eventsMsg{events: append(evs, event.SweepEnded{Base: event.Base{Time: at(2000)}})})
	now = at(2000).Add(oomCardLinger + time.Minute)
	line := strings.TrimRight(strings.Split(m.View(), "\n")[2], " ")
	if !strings.HasPrefix(line, "running 0 · queued 0") || strings.HasSuffix(line, "·") {
		t.Errorf("the line above the cards: %q", line)
	}
}
