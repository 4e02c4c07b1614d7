package ui

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/muesli/termenv"
)

// Every binding of every screen's key map is in that screen's full help:
// a key that works is always listed.
func TestEveryBindingIsInItsHelp(t *testing.T) {
	km := reflect.ValueOf(DefaultKeys())
	for i := 0; i < km.NumField(); i++ {
		screen := km.Type().Field(i).Name
		maps := km.Field(i).Interface().(help.KeyMap)
		listed := map[string]bool{}
		for _, g := range maps.FullHelp() {
			for _, b := range g {
				listed[b.Help().Key+"|"+b.Help().Desc] = true
			}
		}
		var walk func(v reflect.Value, path string)
		walk = func(v reflect.Value, path string) {
			if b, ok := v.Interface().(key.Binding); ok {
				if !listed[b.Help().Key+"|"+b.Help().Desc] {
					t.Errorf("%s: %s (%v) works but is not in the help", screen, path, b.Keys())
				}
				if b.Help().Key == "" || b.Help().Desc == "" {
					t.Errorf("%s: %s has no help text", screen, path)
				}
				return
			}
			for j := 0; j < v.NumField(); j++ {
				walk(v.Field(j), path+"."+v.Type().Field(j).Name)
			}
		}
		walk(km.Field(i), screen)
	}
}

// `?` shows the screen's own keys: detail's log keys, live's trial keys.
func TestHelpIsGeneratedPerScreen(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	live := keys(t, m, "2", "?").View()
	for _, want := range []string{"Keys · Live", "x ", "stop trial", "X ", "cancel sweep", "s ", "shell", "q ", "quit"} {
		if !strings.Contains(live, want) {
			t.Errorf("live help lacks %q:\n%s", want, live)
		}
	}
	if strings.Contains(live, "search log") {
		t.Errorf("live help lists detail's keys:\n%s", live)
	}
	detail := keys(t, m, "3", "enter", "enter", "?").View()
	for _, want := range []string{"Keys · Trial detail", "search log", "next match", "previous match", "follow", "wrap", "rerun exactly"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail help lacks %q:\n%s", want, detail)
		}
	}
	// The footer keeps help and quit at every size.
	for _, sz := range sizes {
		m, _ := withSweep(t, sz.w, sz.h)
		for _, k := range []string{"1", "2", "3", "4", "5"} {
			v := keys(t, m, k).View()
			foot := v[strings.LastIndex(v, "\n")+1:]
			if !strings.Contains(foot, "? help") || !strings.Contains(foot, "q quit") {
				t.Errorf("%dx%d screen %s footer %q lacks help or quit", sz.w, sz.h, k, foot)
			}
		}
	}
}

// j and k move the matrix cursor as the arrows do.
func TestMatrixCursorMovesWithJK(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	tasks := builtinTasks(t)[:3]
	sw, err := l.Launch(LaunchSpec{Tasks: tasks, Ratios: []model.Ratio{{K: 1}, {K: 3}}, Repeats: 1, Concurrency: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	m = keys(t, m, "3", "j", "j", "l")
	if m.matrix.row != 2 || m.matrix.col != 1 {
		t.Fatalf("after j j l: row %d col %d, want 2 1", m.matrix.row, m.matrix.col)
	}
	m = keys(t, m, "k", "h")
	if m.matrix.row != 1 || m.matrix.col != 0 {
		t.Errorf("after k h: row %d col %d, want 1 0", m.matrix.row, m.matrix.col)
	}
}

// With no colour at all (the goldens' profile, as NO_COLOR gives), every
// cursor is still drawn: a ▸ on the cursor row, brackets on the tab.
func TestCursorShowsWithoutColour(t *testing.T) {
	m, _ := withSweep(t, 80, 24)
	for _, c := range []struct {
		name string
		keys []string
		want string
	}{
		{"setup", []string{"1"}, "▸ [ ] builtin/bn-fit-modify"},
		{"setup ratios", []string{"1", "tab"}, "▸[x]1x"},
		{"setup options", []string{"1", "tab", "tab"}, "▸repeats"},
		{"live", []string{"2"}, "▸ 1x · "},
		{"matrix", []string{"3"}, "▸0/1 K"},
		{"matrix cell", []string{"3", "enter"}, "▸ t0001"},
		{"history", []string{"5"}, "▸ 2026"},
		{"tab", []string{"3"}, "[3 Matrix]"},
	} {
		mm := keys(t, m, c.keys...)
		if c.name == "history" {
			mm = update(t, mm, mm.listHistory()())
		}
		if v := mm.View(); !strings.Contains(v, c.want) {
			t.Errorf("%s: no %q without colour:\n%s", c.name, c.want, v)
		}
	}
}

// At 80×24 the setup cursor stays inside the task list's window at every
// row, going down and coming back up.
func TestSetupCursorStaysVisibleAt80x24(t *testing.T) {
	m := New(testOptions(t, &fakeLauncher{}))
	m = update(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	n := len(m.setup.rows)
	check := func(i int) {
		t.Helper()
		v := m.View()
		row := m.setup.rows[i]
		want := fmt.Sprintf("▸ [ ] %-34s", row.task.Name)
		if !strings.Contains(v, want) || !strings.Contains(v, row.agent) {
			t.Fatalf("cursor on row %d (%s) is not drawn:\n%s", i, row.key(), v)
		}
		checkFits(t, v, 80, 24)
	}
	check(0)
	for i := 1; i < n; i++ {
		m = keys(t, m, "j")
		check(i)
	}
	for i := n - 2; i >= 0; i-- {
		m = keys(t, m, "k")
		check(i)
	}
}

// In colour, styled cells keep their padding: the columns after a
// coloured outcome or exit code line up.
func TestColouredColumnsKeepTheirPadding(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	l := &fakeLauncher{}
	opts := testOptions(t, l)
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m.setup.focusRuns = 4
	next, cmd := m.startFocus(heavyOnly(t), "heavy", model.Ratio{K: 1}, model.ScaleBoth)
	m = update(t, next.(Model), cmd())
	m = update(t, m, eventsMsg{events: focusEvents(l.last.plan)})
	v := m.View()
	if !strings.Contains(v, "\x1b[") {
		t.Fatal("no colour in the view: the test would prove nothing")
	}
	col := map[int]bool{}
	for _, line := range strings.Split(ansi.Strip(v), "\n") {
		if strings.Contains(line, " r") && strings.Contains(line, "t000") {
			col[width(line[:strings.Index(line, "2.0s")])] = true
		}
	}
	if len(col) != 1 {
		t.Errorf("focus rows' time column starts at %v, want one column:\n%s", col, ansi.Strip(v))
	}

	m2, _ := withSweep(t, 120, 40)
	d := ansi.Strip(keys(t, m2, "3", "enter", "enter").View())
	peaks := map[int]bool{}
	for _, line := range strings.Split(d, "\n") {
		if strings.HasPrefix(line, "agent ") || strings.HasPrefix(line, "verify ") {
			// the exit column is right-aligned: the peak after it starts
			// at the same column on every row
			i := strings.Index(line, "M ")
			peaks[width(line[:i])] = true
		}
	}
	if len(peaks) != 1 {
		t.Errorf("step table columns are not aligned (%v):\n%s", peaks, d)
	}
}

// A cell lists its outcomes in repeat order, whatever order they ended
// in, and counts cancelled trials apart so they never hide a result.
func TestMatrixCellIsInRepeatOrderAndCountsCancelledApart(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}}, Repeats: 20, Concurrency: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	var evs []event.Event
	trials := sw.Plan().Trials
	// The last 8 are cancelled and end first; the first 12 end last,
	// newest first, r1 killed.
	for i := len(trials) - 1; i >= 0; i-- {
		r := model.TrialResult{Trial: trials[i], Outcome: model.Passed, Start: t0, End: t0.Add(time.Second)}
		switch {
		case i >= 12:
			r.Outcome = model.Cancelled
		case i == 0:
			r.Outcome = model.OOMKilled
		}
		evs = append(evs, trialEnded(r))
	}
	m = update(t, m, eventsMsg{events: evs})
	v := keys(t, m, "3", "l").View()
	if !strings.Contains(v, "11/12 K+++++++++++ 8-") {
		t.Errorf("cell should read 11/12 K+++++++++++ 8-:\n%s", v)
	}
}

// More runs at one peak than the strip has rows: each mark stands for
// several runs, said in the legend, and nothing is cut to a ^.
func TestFocusStripScalesATallColumn(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m.setup.focusRuns = 12
	next, cmd := m.startFocus(heavyOnly(t), "heavy", model.Ratio{K: 1}, model.ScaleBoth)
	m = update(t, next.(Model), cmd())
	var evs []event.Event
	for _, tr := range l.last.plan.Trials {
		evs = append(evs, trialEnded(model.TrialResult{Trial: tr, Outcome: model.OOMKilled, PeakWorkingSetBytes: 128 << 20, Start: t0, End: t0.Add(time.Second),
			OOMs: []model.OOMEvent{{At: t0, Step: "install"}}}))
	}
	m = update(t, m, eventsMsg{events: evs})
	v := m.View()
	if strings.Contains(v, "^") || !strings.Contains(v, "each mark is up to 3 runs") {
		t.Errorf("12 kills at the limit in 5 rows:\n%s", v)
	}
	if strings.Count(v, "K") < 4 {
		t.Errorf("the kills' column should have 4 marks:\n%s", v)
	}
}

// "stopping t0003" goes when t0003 has ended; "cancelling the sweep…"
// when the sweep has.
func TestStatusNoticesEndWithWhatTheyAnnounce(t *testing.T) {
	m, l := withSweep(t, 120, 40)
	m = keys(t, m, "2", "l", "x", "y")
	if len(l.last.stopped) != 1 || !strings.Contains(m.View(), "stopping "+l.last.stopped[0]) {
		t.Fatalf("stopped %v:\n%s", l.last.stopped, m.View())
	}
	id := l.last.stopped[0]
	r := model.TrialResult{Trial: m.state.Trials[id].Trial, Outcome: model.Cancelled, Start: t0, End: t0.Add(4 * time.Second)}
	m = update(t, m, eventsMsg{events: []event.Event{trialEnded(r)}})
	if v := m.View(); strings.Contains(v, "stopping "+id) || !strings.Contains(v, id+" stopped") {
		t.Errorf("after %s ended the status line should say it stopped:\n%s", id, v)
	}
	m = keys(t, m, "X", "y")
	if !strings.Contains(m.View(), "cancelling the sweep") {
		t.Fatalf("no cancelling notice:\n%s", m.View())
	}
	m = update(t, m, eventsMsg{events: []event.Event{event.SweepEnded{Base: event.Base{Time: t0.Add(5 * time.Second)}, Interrupted: true}}})
	if v := m.View(); strings.Contains(v, "cancelling the sweep") {
		t.Errorf("the sweep has ended but the status line still says cancelling:\n%s", v)
	}
	// Any other notice goes after messageTTL.
	now := t0.Add(3 * time.Second)
	m.opts.Now = func() time.Time { return now }
	m = keys(t, m, "t")
	if !strings.Contains(m.View(), "theme dark · host") {
		t.Fatal("no theme notice")
	}
	now = now.Add(messageTTL + time.Second)
	if strings.Contains(m.View(), "theme dark · host") {
		t.Error("the theme notice outstayed messageTTL")
	}
}

// Asked to stop a trial whose end came while the question was on screen:
// said so, and no "stopping" waits for good (the new user of 2026-12-06
// saw it stay through every screen).
func TestStoppingATrialThatHadEnded(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	m = keys(t, m, "2", "l", "x")
	if m.confirm == nil {
		t.Fatalf("x asked nothing:\n%s", m.View())
	}
	asked := ""
	for tid, v := range m.state.Trials {
		if v.Phase != Finished && strings.Contains(m.confirm.prompt, tid) {
			asked = tid
		}
	}
	if asked == "" {
		t.Fatalf("x asked %q, naming no running trial", m.confirm.prompt)
	}
	m = update(t, m, eventsMsg{events: []event.Event{trialEnded(model.TrialResult{Trial: m.state.Trials[asked].Trial, Outcome: model.Passed, Start: t0, End: t0.Add(4 * time.Second)})}})
	m = keys(t, m, "y")
	if v := m.View(); strings.Contains(v, "stopping "+asked) || !strings.Contains(v, asked+" had already ended") {
		t.Errorf("stopping a trial that had ended: the status line waits for its end:\n%s", v)
	}
}

// Keys typed faster than the console reads them come as one message of
// several runes: each still moves the cursor.
func TestBatchedKeysEachCount(t *testing.T) {
	m := New(testOptions(t, &fakeLauncher{}))
	m = update(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m = update(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjjj")})
	if got := m.setup.cursor.at(len(m.setup.rows)); got != 4 {
		t.Fatalf("after jjjj in one message the cursor is on row %d, want 4", got)
	}
	m = update(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("kk")})
	if got := m.setup.cursor.at(len(m.setup.rows)); got != 2 {
		t.Errorf("after kk the cursor is on row %d, want 2", got)
	}
}

// A real task whose Debian image is missing is marked on its row, the
// preview says what choosing it prepares, and its duration is not passed
// off as the synthetic estimate ("roughly 0s").
func TestRealTasksAreMarkedAndNotEstimatedAsZero(t *testing.T) {
	opts := testOptions(t, &fakeLauncher{})
	portOf(opts).imageNote = func(task model.Task) string {
		if strings.HasPrefix(task.Image, "builtin-debian") {
			return "builds headroom-debian first, once"
		}
		return ""
	}
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	v := m.View()
	if n := strings.Count(v, "⚠ downloads Debian"); n != 4 {
		t.Errorf("%d real rows marked, want 4:\n%s", n, v)
	}
	for m.setup.rows[m.setup.cursor.at(len(m.setup.rows))].task.Name != "real/bn-fit-install" {
		m = keys(t, m, "j")
	}
	v = keys(t, m, "space").View()
	for _, want := range []string{"⚠ bn-fit-install: builds headroom-debian first", "real commands with no estimate", "by their timeouts"} {
		if !strings.Contains(strings.ReplaceAll(v, "\n  ", " "), want) {
			t.Errorf("preview lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "roughly 0s") {
		t.Errorf("a real task estimated at 0s:\n%s", v)
	}
}

// History rows say what was run: ratios, repeats, tasks.
func TestHistorySaysWhatWasRun(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	m = keys(t, m, "5")
	m = update(t, m, m.listHistory()())
	v := m.View()
	for _, want := range []string{"1x 3x uncapped ×3 · bn-fit-modify +3 more", "1x 1.5x ×6 · bn-fit-modify"} {
		if !strings.Contains(v, want) {
			t.Errorf("history lacks %q:\n%s", want, v)
		}
	}
}

// The infra-error rate row is red only where there were infra errors: a
// 0% cell (the uncapped column here) is not drawn as an alarm.
func TestInfraRowRedOnlyAboveZero(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	m, _ := withSweep(t, 120, 40)
	red := m.common().Styles().OOM.Render("0%")
	red = red[:strings.Index(red, "0%")]
	if red == "" {
		t.Fatal("the OOM style has no colour: the test would prove nothing")
	}
	var row string
	for _, line := range strings.Split(keys(t, m, "3").View(), "\n") {
		if strings.Contains(ansi.Strip(line), "infra-error rate") {
			row = line
		}
	}
	plain := ansi.Strip(row)
	if !strings.Contains(plain, " 0% ") || !strings.Contains(plain, "100%") {
		t.Fatalf("want a 100%% and a 0%% infra cell in the fixture: %q", plain)
	}
	if !strings.Contains(row, red+" 100%") {
		t.Errorf("the 100%% infra cell is not red: %q", row)
	}
	if strings.Contains(row, red+" 0%") {
		t.Errorf("the 0%% infra cell is red: %q", row)
	}
}

// A sweep the store stopped (its directory removed) says where its
// records went on the status line, and keeps saying it past messageTTL:
// records not kept are not a notice to miss.
func TestRecordsNotKeptStayOnTheStatusLine(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	now := t0.Add(3 * time.Second)
	m.opts.Now = func() time.Time { return now }
	m = update(t, m, eventsMsg{events: []event.Event{event.SweepEnded{Base: event.Base{Time: now}, Interrupted: true,
		NotKept: "the experiment directory was removed: its 1 record(s) were saved to /x/e.rescued"}}})
	want := "records not kept: the experiment directory was removed"
	if !strings.Contains(m.View(), want) {
		t.Fatalf("no %q on the status line:\n%s", want, m.View())
	}
	now = now.Add(messageTTL + time.Minute)
	if !strings.Contains(m.View(), want) {
		t.Errorf("the records-not-kept notice went after messageTTL:\n%s", m.View())
	}
}

// The matrix's help glosses the words its lines use (what-if, contended,
// p by task, pooled p, power), which a new user met unexplained, and the
// matrix says where they are explained.
func TestMatrixHelpGlossesItsTerms(t *testing.T) {
	for _, sz := range sizes {
		m, _ := withSweep(t, sz.w, sz.h)
		if v := keys(t, m, "3").View(); !strings.Contains(v, "? explains the terms") {
			t.Errorf("%dx%d: the matrix does not say ? explains its terms:\n%s", sz.w, sz.h, v)
		}
		help := keys(t, m, "3", "?").View()
		for _, want := range []string{"Terms", "what-if ", "contended ", "p by task ", "pooled p ", "real ", "noise ", "unsure ", "power ", "Keys · Matrix", "set baseline"} {
			if !strings.Contains(help, want) {
				t.Errorf("%dx%d: matrix help lacks %q:\n%s", sz.w, sz.h, want, help)
			}
		}
	}
}

// On q the console's screen goes, and the terminal showed what was
// printed before it (make's build log) where the console's last lines
// had been: the console leaves the sweep's matrix instead, plain text,
// with no cursor; none before any trial has finished.
func TestExitSummaryIsTheMatrixInPlainText(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	sum := m.ExitSummary()
	for _, want := range []string{"the matrix as the console closed: 2 of 4 trials done", "task · agent", "bn-fit-modify · heavy", "success rate", "infra-error rate", "failed, the task's own", "K OOM-killed"} {
		if !strings.Contains(sum, want) {
			t.Errorf("exit summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "\x1b") || strings.Contains(sum, "▸") || strings.Contains(sum, "what-if") {
		t.Errorf("exit summary has styles, the cursor or the cursor cell's lines:\n%s", sum)
	}
	if got := New(testOptions(t, &fakeLauncher{})).ExitSummary(); got != "" {
		t.Errorf("no sweep: exit summary %q, want none", got)
	}
}

// A sweep quit mid-way cancels what had not run: the exit summary's
// heading said "4 of 4 trials done" when 2 had run and 2 were cancelled.
// It counts the trials that ran, and says the cancelled apart.
func TestExitSummaryCountsTheCancelledApart(t *testing.T) {
	m, l := withSweep(t, 120, 40)
	if got, want := m.ExitSummary(), "2 of 4 trials done, 2 not ended ──"; !strings.Contains(got, want) {
		t.Errorf("mid-sweep: exit summary lacks %q:\n%s", want, got)
	}
	var evs []event.Event
	for _, tr := range l.last.plan.Trials[2:] {
		evs = append(evs, trialEnded(model.TrialResult{Trial: tr, Outcome: model.Cancelled, Reason: "cancelled", Start: t0, End: t0.Add(3 * time.Second)}))
	}
	evs = append(evs, event.SweepEnded{Base: event.Base{Time: t0.Add(3 * time.Second)}, Interrupted: true})
	m = update(t, m, eventsMsg{events: evs})
	sum := m.ExitSummary()
	if want := "── the matrix as the console closed: 2 of 4 trials done, 2 cancelled ──"; !strings.Contains(sum, want) {
		t.Errorf("quit mid-sweep: exit summary lacks %q:\n%s", want, sum)
	}
}

// fiveTaskSweep is the console after a sweep of five tasks at 1x, 3x and
// uncapped, every trial passed.
func fiveTaskSweep(t *testing.T, w, h int) (Model, []string) {
	t.Helper()
	l := &fakeLauncher{}
	m := update(t, New(testOptions(t, l)), tea.WindowSizeMsg{Width: w, Height: h})
	var tasks []model.Task
	var names []string
	for _, task := range builtinTasks(t) {
		switch task.Name {
		case "builtin/compile-project", "builtin/cpu-deadline-tests", "builtin/heavy-strategy", "builtin/memory-hungry-tests", "builtin/swe-edit":
			tasks = append(tasks, task)
			names = append(names, strings.TrimPrefix(task.Name, "builtin/"))
		}
	}
	sw, err := l.Launch(LaunchSpec{Tasks: tasks, Ratios: []model.Ratio{{K: 1}, {K: 3}, model.Uncapped}, Repeats: 1, Concurrency: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	var evs []event.Event
	for _, tr := range sw.Plan().Trials {
		evs = append(evs, trialEnded(model.TrialResult{Trial: tr, Outcome: model.Passed, Start: t0, End: t0.Add(time.Second), PeakWorkingSetBytes: 10 << 20}))
	}
	evs = append(evs, event.SweepEnded{Base: event.Base{Time: t0.Add(2 * time.Second)}})
	return update(t, m, eventsMsg{events: evs}), names
}

// A cell's trial list kept three of a five-task matrix's rows, silently,
// under rates that count all five: the matrix keeps every row it can and
// says how many it hides.
func TestCellListKeepsOrCountsEveryRow(t *testing.T) {
	for _, sz := range append(sizes, struct{ w, h int }{80, 18}) {
		m, names := fiveTaskSweep(t, sz.w, sz.h)
		for _, ks := range [][]string{{"3"}, {"3", "enter"}, {"3", "down", "down", "down", "down", "enter"}} {
			v := keys(t, m, ks...).View()
			checkFits(t, v, sz.w, sz.h)
			shown := 0
			for _, n := range names {
				if strings.Contains(v, n) {
					shown++
				}
			}
			if shown < len(names) && !strings.Contains(v, fmt.Sprintf("of %d shown: %d hidden", len(names), len(names)-shown)) {
				t.Errorf("%dx%d %v: %d of %d task rows shown, and nothing says %d are hidden:\n%s", sz.w, sz.h, ks, shown, len(names), len(names)-shown, v)
			}
			if sz.h >= 40 && shown < len(names) {
				t.Errorf("%dx%d %v: %d of %d task rows shown on a tall screen:\n%s", sz.w, sz.h, ks, shown, len(names), v)
			}
		}
	}
}

// The matrix's legend explained a cancelled count ("2- 2 cancelled, in
// no rate") under a matrix with none cancelled, read as 2 cancelled: it
// says it only where a cell has some, as an example.
func TestCancelledLegendOnlyWhereSomeAre(t *testing.T) {
	m, _ := fiveTaskSweep(t, 120, 40)
	if v := keys(t, m, "3").View(); strings.Contains(v, "cancelled") {
		t.Errorf("nothing was cancelled, and the matrix speaks of cancelled trials:\n%s", v)
	}
	m, l := withSweep(t, 120, 40)
	var evs []event.Event
	for _, tr := range l.last.plan.Trials[2:] {
		evs = append(evs, trialEnded(model.TrialResult{Trial: tr, Outcome: model.Cancelled, Start: t0, End: t0.Add(3 * time.Second)}))
	}
	m = update(t, m, eventsMsg{events: evs})
	if v := keys(t, m, "3").View(); !strings.Contains(v, model.CancelledLegend()) || !strings.Contains(v, "e.g.") {
		t.Errorf("cancelled trials, and the legend does not explain their count as an example:\n%s", v)
	}
}

// A cell's trials are in repeat order whatever order its sweep lists
// them in: a resumed sweep's cell listed "t0009 r2, t0015 r3, t0003 r1"
// under "in repeat order", and read x++ where the report read +x+ (a new
// user's).
func TestCellIsInRepeatOrderAfterAResume(t *testing.T) {
	cell := func(id string, rep int) model.Trial {
		return model.Trial{ID: id, Task: "t", Agent: "a", Ratio: model.Uncapped, Repeat: rep}
	}
	s := NewSweepState(model.Plan{Ratios: []model.Ratio{model.Uncapped}, Trials: []model.Trial{cell("t0009", 2), cell("t0015", 3), cell("t0003", 1)}}, time.Now())
	var got []int
	for _, v := range s.Cell(model.RowKey{Task: "t", Agent: "a"}, model.Uncapped) {
		got = append(got, v.Trial.Repeat)
	}
	if want := []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("repeats %v, want %v", got, want)
	}
}

// A killed trial's detail gives its peak as the headless line and the
// report do, the kernel's usage at the kill first: it said "58.9MiB
// (kernel; sampled 51.8MiB)" under a card and a line saying 65.2MiB (a
// new user's).
func TestDetailPeakIsTheRecordsOfAKill(t *testing.T) {
	tr := model.Trial{ID: "t0001", Task: "t", Agent: "a", Ratio: model.Ratio{K: 1}}
	r := model.TrialResult{Trial: tr, Outcome: model.OOMKilled, PeakWorkingSetBytes: 51_800 << 10, KernelPeakBytes: 58_900 << 10,
		OOMs: []model.OOMEvent{{KernelUsageBytes: 65_200 << 10}}}
	v := &TrialView{Trial: tr, Result: &r, Peak: r.PeakWorkingSetBytes}
	if got, want := v.PeakText(model.FormatBytes), model.TrialPeakLabel(r, model.FormatBytes); got != want || !strings.HasPrefix(got, "63.7MiB (the kernel's usage at the kill") {
		t.Errorf("detail peak %q, want %q", got, want)
	}
}

// The preview's bound by timeouts is one a sweep cannot pass: one
// 2-minute trial at concurrency 2 is at most 2 minutes, not half of it
// (a new user's "at most 1m0s"); trials beyond the slots queue.
func TestWallBoundByTimeouts(t *testing.T) {
	for _, c := range []struct {
		total, longest time.Duration
		conc           int
		want           time.Duration
	}{
		{2 * time.Minute, 2 * time.Minute, 2, 2 * time.Minute},
		{2 * time.Minute, 2 * time.Minute, 1, 2 * time.Minute},
		{8 * time.Minute, 2 * time.Minute, 2, 5 * time.Minute},
		{8 * time.Minute, 2 * time.Minute, 1, 8 * time.Minute},
		{4 * time.Minute, 2 * time.Minute, 8, 2*time.Minute + 15*time.Second},
	} {
		if got := wallBound(c.total, c.longest, c.conc); got != c.want {
			t.Errorf("wallBound(%v, %v, %d) = %v, want %v", c.total, c.longest, c.conc, got, c.want)
		}
	}
}

// The showcase's two rows, one killed every time and one passing, give
// 1x a rate of 50% over most of 0–100: the matrix says why under its
// rows (the fifth new user read "[0–100]" with nothing to say why).
func TestMatrixSaysWhyTwoRowsGiveAWideRate(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	var task model.Task
	for _, b := range builtinTasks(t) {
		if b.Name == "builtin/bn-fit-modify" {
			task = b
		}
	}
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}}, Repeats: 3, Concurrency: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	var evs []event.Event
	for _, tr := range sw.Plan().Trials {
		r := model.TrialResult{Trial: tr, Outcome: model.Passed, Start: t0, End: t0.Add(time.Second)}
		if tr.Agent == "heavy" {
			r.Outcome = model.OOMKilled
		}
		evs = append(evs, trialEnded(r))
	}
	m = update(t, m, eventsMsg{events: evs})
	if v := keys(t, m, "3").View(); !strings.Contains(v, "Two rows of task and agent: a rate's interval is clustered by row") || !strings.Contains(v, "50% [0–100]") {
		t.Errorf("the matrix of two rows that differ should say why 50%% [0–100]:\n%s", v)
	}
}
