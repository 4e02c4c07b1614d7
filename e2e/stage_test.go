package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// stageBox is one card's border on a captured screen.
type stageBox struct {
	row, col, right int
	title           string
}

// stageBoxes finds every card's top border on a screen.
func stageBoxes(lines [][]rune) []stageBox {
	var out []stageBox
	for row, l := range lines {
		for col, c := range l {
			if c != '╭' && c != '┏' {
				continue
			}
			right := col + 1
			for right < len(l) && l[right] != '╮' && l[right] != '┓' {
				right++
			}
			out = append(out, stageBox{row, col, right, string(l[col:min(right+1, len(l))])})
		}
	}
	return out
}

// inside is a box's lines inside its border, down to its bottom border.
func (b stageBox) inside(lines [][]rune) []string {
	var out []string
	for _, l := range lines[b.row+1:] {
		if b.right >= len(l) || l[b.col] == '╰' || l[b.col] == '┗' {
			break
		}
		out = append(out, string(l[b.col+1:b.right]))
	}
	return out
}

// recordNames are the names a record gives processes (its kills',
// activities' and trees' "command").
var recordNames = regexp.MustCompile(`"command":"((?:[^"\\]|\\.)*)"`)

// trialTitle is a card's title: its ratio, agent and repeat.
var trialTitle = regexp.MustCompile(`(1x|3x|uncapped) · \S+ · (repeat |#)\d+`)

// internalNames are headroom's own command lines: no capture shows one
// (a kill named `/hr-workload drive` under load), nor any record but the
// first two (a kill's process tree names the container's PID 1 as what it
// is, "(headroom step driver)").
var internalNames = []string{"hr-workload", "--profile {", "(headroom step driver)"}

// The demo at 120×40, watched for over a minute as an audience would:
// every ratio's card keeps its cell (the same rows and columns in every
// capture), the cards start right under the progress lines, a killed
// card keeps its frozen gauge, peak and chart for the whole linger, the
// banner names the killed command as a person knows it, and no screen
// shows headroom's own command lines. Once the first 3x and uncapped
// trials have passed, every capture holds their results (green PASSED
// cards, or FAILED where the heavy agent's fit failed by its own design,
// its fail chance), and most show the red kill at 1x beside them: now and
// then the heavy install fits its 128 MiB and 1x runs on. HEADROOM_STAGE_WATCH
// (a duration) watches longer: the presenter's 3 minutes.
func TestConsoleDemoStageHoldsStill(t *testing.T) {
	tm, out := startConsole(t, "stage", 120, 40, "demo")
	tm.waitFor(3*time.Minute, "1x · heavy · repeat 1")
	type frozen struct {
		picture     []string
		first, last time.Time
	}
	kills := map[string]*frozen{}
	cellCol := map[string]int{"1x": 0, "3x": 40, "uncapped": 80}
	var bottom = -1
	named, scaled, cornered := false, false, false
	// A violation counts when the next capture shows it too: a capture
	// can catch the terminal between two writes of one frame.
	var pending string
	watch := 65 * time.Second
	if d, err := time.ParseDuration(os.Getenv("HEADROOM_STAGE_WATCH")); err == nil {
		watch = d
	}
	// side: captures since the first pass at 3x and uncapped, and those
	// of them with a kill at 1x beside two passes.
	passedOnce, captures, side := false, 0, 0
	begun := time.Now()
	deadline := begun.Add(watch)
	for time.Now().Before(deadline) {
		screen := tm.screen()
		var rows [][]rune
		for _, l := range strings.Split(screen, "\n") {
			rows = append(rows, []rune(l))
		}
		now := time.Now()
		problem := ""
		for _, internal := range internalNames {
			if strings.Contains(screen, internal) {
				problem = "headroom's internal command line " + internal + " is on screen"
			}
		}
		boxes := stageBoxes(rows)
		if len(boxes) != 3 && problem == "" {
			problem = "want one card per ratio, three in all"
		}
		for _, b := range boxes {
			if problem != "" {
				break
			}
			in := b.inside(rows)
			if b.row != 3 {
				problem = "a card starts below row 3: a blank band above the cards"
				break
			}
			if bottom == -1 {
				bottom = b.row + len(in) + 1
			}
			if b.row+len(in)+1 != bottom {
				problem = "a card's height changed"
				break
			}
			m := trialTitle.FindStringSubmatch(b.title)
			ratio := ""
			if m != nil {
				ratio = m[1]
			} else if len(in) > 0 {
				for r := range cellCol {
					if strings.Contains(in[0], "no "+r+" trial running") {
						ratio = r
					}
				}
			}
			if want, ok := cellCol[ratio]; !ok || b.col != want {
				problem = "the " + ratio + " card is not in its cell: " + b.title
				break
			}
			joined := strings.Join(in, "\n")
			scaled = scaled || ratio == "uncapped" && strings.Contains(joined, "bar to 384M")
			cornered = cornered || strings.Contains(joined, "next ")
			if !strings.HasPrefix(b.title, "┏") || m == nil || len(in) < 8 {
				continue
			}
			// A killed card: gauge, peak, the banner with the killed
			// command, then the chart down to the verdict's line.
			banner := strings.Join(strings.Fields(in[4]+" "+in[5]), " ")
			if strings.Contains(banner, "killed pip install pandas networkx scikit-learn") {
				named = true
			}
			chartEnd := 6
			for chartEnd < len(in) && !strings.ContainsAny(in[chartEnd], "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏") && !strings.Contains(in[chartEnd], "OOM-KILLED") &&
				!strings.Contains(in[chartEnd], "finishing") && !strings.Contains(in[chartEnd], "OOM KILLED") && !strings.Contains(in[chartEnd], "after the kill") {
				chartEnd++
			}
			picture := append([]string{in[0], in[2]}, in[6:chartEnd]...)
			k := kills[m[0]]
			if k == nil {
				kills[m[0]] = &frozen{picture: picture, first: now, last: now}
				continue
			}
			if strings.Join(picture, "\n") != strings.Join(k.picture, "\n") {
				problem = "the killed card " + m[0] + "'s gauge, peak or chart changed during its linger"
				break
			}
			k.last = now
		}
		// The kill beside the passes: a red (heavy-bordered) 1x card
		// banner and PASSED in the 3x and uncapped cells.
		cell := map[string]string{}
		for _, b := range boxes {
			if m := trialTitle.FindStringSubmatch(b.title); m != nil {
				in := strings.Join(b.inside(rows), "\n")
				if strings.HasPrefix(b.title, "┏") && strings.Contains(in, "OOM KILLED") {
					cell[m[1]] = "kill"
				} else if strings.Contains(in, "PASSED") {
					cell[m[1]] = "pass"
				} else if strings.Contains(in, "FAILED") {
					cell[m[1]] = "failed" // the agent's own, by design now and then
				}
			}
		}
		passedOnce = passedOnce || cell["3x"] == "pass" && cell["uncapped"] == "pass"
		if passedOnce && problem == "" {
			captures++
			ended := func(r string) bool { return cell[r] == "pass" || cell[r] == "failed" }
			switch {
			case cell["1x"] == "kill" && cell["3x"] == "pass" && cell["uncapped"] == "pass":
				side++
			case !ended("3x") || !ended("uncapped"):
				problem = "no held results of 3x and uncapped beside 1x"
			case cell["1x"] != "kill":
				// The kernel's own variance: now and then the heavy
				// install fits its 128 MiB (its cache reclaimed; 1 in
				// 20-100 here), and 1x runs on, or passes. Counted: most
				// captures must still show the kill (below).
			}
		}
		switch {
		case problem != "" && problem == pending:
			t.Fatalf("%s:\n%s", problem, screen)
		case problem != "":
			pending = problem
		default:
			pending = ""
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Each kill seen whole (appearing after the watch began, gone
	// before it ended) held its cell, still, for its 10 s linger.
	whole := 0
	for id, k := range kills {
		if k.first.Sub(begun) < time.Second || deadline.Sub(k.last) < time.Second {
			continue
		}
		whole++
		if held := k.last.Sub(k.first); held < 9*time.Second {
			t.Errorf("the kill %s held its cell %s, not its 10 s linger", id, held.Round(100*time.Millisecond))
		}
	}
	t.Logf("%d kills watched, %d from start to end; %d of %d captures after the first passes show the kill beside both passes", len(kills), whole, side, captures)
	if captures == 0 {
		t.Error("no capture showed 3x and uncapped passed")
	} else if side*2 < captures {
		t.Errorf("only %d of %d captures after the first passes show a held kill at 1x beside both passes", side, captures)
	}
	if whole == 0 {
		t.Errorf("no kill watched through its linger in %s", watch)
	}
	if !named {
		t.Error("no kill banner named pip install pandas networkx scikit-learn")
	}
	if !scaled {
		t.Error("the uncapped card never said its bar is drawn to the 3x limit (bar = 384M)")
	}
	if !cornered {
		t.Error("no next repeat ever waited in a cell's corner")
	}
	tm.keys("q")
	tm.waitUntil(10*time.Second, "the quit question or the exit", func(s string) bool {
		return strings.Contains(s, "Quit?") || strings.Contains(s, "headroom exited")
	})
	tm.keys("y")
	// The demo's end is no interruption: exit 0, no "interrupted".
	tm.waitFor(2*time.Minute, "headroom exited")
	if end := tm.screen(); !strings.Contains(end, "headroom exited 0") || strings.Contains(end, "interrupted") {
		t.Errorf("quitting the demo should end it, exit 0:\n%s", end)
	}
	dir, left := onlyExperiment(t, out)
	if left > 0 {
		t.Errorf("%d container(s) left behind", left)
	}
	// The records name kills and processes as a person would too.
	records, err := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(records)), "\n") {
		for _, f := range recordNames.FindAllStringSubmatch(l, -1) {
			for _, internal := range internalNames[:2] {
				if strings.Contains(f[1], internal) {
					t.Errorf("a record names %q:\n%.300s", f[1], l)
				}
			}
		}
	}
}
