package ui

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
	"github.com/muesli/termenv"
)

// The README's pictures are these frames: the console's own View at
// 120x40, in colour (256 colours, the dark theme), kept as goldens so a
// change to a screen shows here. `make pictures` rewrites them (-update)
// and draws each to docs/pictures/<name>.svg (frameSVG).
var pictures = []struct {
	name  string
	frame func(t *testing.T) string
}{
	{"stage-kill", stageKillFrame},
	{"matrix", matrixFrame},
}

const pictureW, pictureH = 120, 40

func TestPictureFrames(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, p := range pictures {
		t.Run(p.name, func(t *testing.T) {
			v := p.frame(t)
			if !strings.Contains(v, "\x1b[38;5;") {
				t.Fatal("no colour in the frame: the picture would be grey")
			}
			checkFits(t, ansi.Strip(v), pictureW, pictureH)
			frame := spellReverse(v)
			golden.RequireEqual(t, []byte(frame))
			if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
				// make pictures: the README's picture, drawn from the frame.
				if err := os.WriteFile(picturePath(p.name), []byte(pictureSVG(frame)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func picturePath(name string) string { return filepath.Join("..", "docs", "pictures", name+".svg") }

// pictureSVG is a frame drawn as the README's picture, naming the sha256
// of the frame it was drawn from.
func pictureSVG(frame string) string {
	header := fmt.Sprintf("<!-- headroom-frame-sha256: %x (make pictures draws it from the frame in ui/testdata/TestPictureFrames) -->\n", sha256.Sum256([]byte(frame)))
	return frameSVG(parseFrame(frame), header)
}

// Each committed picture names the sha256 of the frame it was rendered
// from (make pictures writes it): a frame changed without `make
// pictures` leaves the README showing an old console.
func TestPicturesAreRenderedFromTheFrames(t *testing.T) {
	sum := regexp.MustCompile(`headroom-frame-sha256: ([0-9a-f]{64})`)
	for _, p := range pictures {
		frame, err := os.ReadFile(filepath.Join("testdata", "TestPictureFrames", p.name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		svg := picturePath(p.name)
		b, err := os.ReadFile(svg)
		if err != nil {
			t.Fatalf("%v: run make pictures", err)
		}
		m := sum.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s names no frame checksum: run make pictures", svg)
		}
		if want := fmt.Sprintf("%x", sha256.Sum256(frame)); string(m[1]) != want {
			t.Errorf("%s was rendered from another frame (sha256 %s, the frame's is %s): run make pictures", svg, m[1], want)
		}
	}
}

// A picture draws foreground and background colours, not reverse
// video, which the kill banner and the cursor are drawn in: spellReverse
// swaps an SGR's colours itself, against the picture's own text
// (#C4C4C4) and background (#171717) where one is the terminal's default.
func spellReverse(frame string) string {
	sgr := regexp.MustCompile("\x1b\\[([0-9;]*)m")
	return sgr.ReplaceAllStringFunc(frame, func(seq string) string {
		ps := strings.Split(sgr.FindStringSubmatch(seq)[1], ";")
		var keep []string
		fg, bg := "2;196;196;196", "2;23;23;23"
		reverse := false
		for i := 0; i < len(ps); i++ {
			switch p := ps[i]; {
			case p == "7":
				reverse = true
			case (p == "38" || p == "48") && i+1 < len(ps):
				n := 3 // 5;N
				if ps[i+1] == "2" {
					n = 5 // 2;R;G;B
				}
				n = min(n, len(ps)-i)
				c := strings.Join(ps[i+1:i+n], ";")
				if p == "38" {
					fg = c
				} else {
					bg = c
				}
				keep = append(keep, ps[i:i+n]...)
				i += n - 1
			default:
				keep = append(keep, p)
			}
		}
		if !reverse {
			return seq
		}
		var out []string
		for i := 0; i < len(keep); i++ {
			if keep[i] == "38" || keep[i] == "48" {
				i += map[bool]int{true: 4, false: 2}[i+1 < len(keep) && keep[i+1] == "2"]
				continue
			}
			out = append(out, keep[i])
		}
		out = append(out, "38;"+bg, "48;"+fg)
		return "\x1b[" + strings.Join(out, ";") + "m"
	})
}

// stageKillFrame is the showcase as demoStream scripts it, 9 s in: the
// 1x card frozen at its kill with its banner, 3x and uncapped green with
// their passes, each cell's next repeat running in its corner.
func stageKillFrame(t *testing.T) string {
	now := at(0)
	m, plan := demoConsoleRepeats(t, pictureW, pictureH, &now, 20)
	m.theme = themes.Dark()
	m.applyTheme()
	var evs []event.Event
	for _, e := range demoStream(plan) {
		if e.ms <= 9000 {
			evs = append(evs, e.e)
		}
	}
	now = at(9000)
	m = update(t, m, eventsMsg{events: evs})
	return m.View()
}

// matrixFrame is the matrix after a finished sweep of four built-in
// tasks at 1x, 3x and uncapped, three repeats: the heavy install is
// killed at its spec and passes with room, the test suite is killed
// sometimes, the rest pass.
func matrixFrame(t *testing.T) string {
	l := &fakeLauncher{}
	opts := testOptions(t, l)
	opts.Theme = themes.Dark()
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: pictureW, Height: pictureH})
	m = update(t, m, hostMsg(portOf(m.opts).host()))
	var tasks []model.Task
	for _, task := range builtinTasks(t) {
		switch task.Name {
		case "builtin/bn-fit-modify", "builtin/compile-project", "builtin/memory-hungry-tests", "builtin/swe-edit":
			tasks = append(tasks, task)
		}
	}
	sw, err := l.Launch(LaunchSpec{Tasks: tasks, Ratios: []model.Ratio{{K: 1}, {K: 3}, model.Uncapped}, Repeats: 3, Concurrency: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	plan := sw.Plan()
	evs := []event.Event{event.SweepStarted{Base: event.Base{Time: t0}, Plan: plan}}
	for i, tr := range plan.Trials {
		end := t0.Add(time.Duration(i+1) * 2 * time.Second)
		res := model.TrialResult{Trial: tr, Outcome: model.Passed, Start: end.Add(-2 * time.Second), End: end, PeakWorkingSetBytes: tr.Policy.GuaranteeBytes * 9 / 10}
		kill := func(step string) {
			res.Outcome = model.OOMKilled
			res.KilledInStep = step
			res.PeakWorkingSetBytes = tr.Policy.HardLimitBytes
			res.OOMs = []model.OOMEvent{{At: end.Add(-time.Second), Step: step, Source: "events", WorkingSetBytes: tr.Policy.HardLimitBytes}}
		}
		unlimited := tr.Ratio == model.Uncapped
		// Where 1x kills, the roomier ratios' peaks pass the spec too, so
		// the what-if from uncapped agrees with what 1x measured.
		over := func(pct int64) { res.PeakWorkingSetBytes = tr.Policy.GuaranteeBytes * pct / 100 }
		switch {
		case tr.Task == "builtin/bn-fit-modify" && tr.Agent == "heavy":
			over(133)
		case tr.Task == "builtin/memory-hungry-tests" && tr.Repeat != 2:
			over(120)
		case tr.Task == "builtin/compile-project" && tr.Repeat == 3:
			over(105)
		}
		switch {
		case tr.Task == "builtin/bn-fit-modify" && tr.Agent == "heavy" && tr.Ratio.K == 1:
			kill("install")
		case tr.Task == "builtin/memory-hungry-tests" && tr.Ratio.K == 1 && tr.Repeat != 2:
			kill("test")
		case tr.Task == "builtin/memory-hungry-tests" && tr.Ratio.K == 3 && tr.Repeat == 1:
			res.Outcome = model.PassedAfterOOM
			res.OOMs = []model.OOMEvent{{At: end.Add(-time.Second), Step: "test", Source: "events"}}
		case tr.Task == "builtin/compile-project" && tr.Ratio.K == 1 && tr.Repeat == 3:
			kill("build")
		case tr.Task == "builtin/swe-edit" && tr.Repeat == 2 && !unlimited:
			res.Outcome = model.Failed
		}
		if res.Outcome != model.OOMKilled {
			res.Steps = []model.StepResult{{Name: "agent", Phase: "agent", Start: res.Start, End: res.End, PeakWorkingSetBytes: res.PeakWorkingSetBytes}}
		}
		evs = append(evs, event.TrialQueued{Base: event.Base{Trial: tr.ID, Time: t0}, Trial: tr},
			event.TrialStarted{Base: event.Base{Trial: tr.ID, Time: res.Start}, ContainerID: "c-" + tr.ID, SampleSource: "cgroup-v1"})
		// A memory trace rising to the peak: the what-if reads the
		// uncapped ones.
		for j := int64(1); j <= 10; j++ {
			at := res.Start.Add(time.Duration(j) * 150 * time.Millisecond)
			evs = append(evs, event.MemorySample{Base: event.Base{Trial: tr.ID, Time: at}, Sample: event.Sample{Time: at, WorkingSetBytes: res.PeakWorkingSetBytes * j / 10}})
		}
		evs = append(evs, trialEnded(res))
	}
	m = update(t, m, eventsMsg{events: evs})
	m = keys(t, m, "3")
	return m.View()
}
