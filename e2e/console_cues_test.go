package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// cursorLine is the screen line that carries the list cursor mark.
func cursorLine(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "▸ [") {
			return l
		}
	}
	return ""
}

// Under NO_COLOR, at 80×24, the setup cursor is drawn (a ▸, not reverse
// video) on every row as it scrolls through the whole task list and back,
// and space selects the row it is on.
func TestConsoleNoColorCursorScrollsAt80x24(t *testing.T) {
	tm, _ := startConsoleEnv(t, "nocolor", 80, 24, "NO_COLOR=1", "--repeats", "1")
	// It opens on the showcase chosen (bn-fit-modify's two rows).
	first := tm.waitFor(time.Minute, "Tasks · 2 of", "repeats 1")
	if !strings.Contains(cursorLine(first), "builtin/bn-fit-modify") {
		t.Fatalf("no cursor on the first row without colour:\n%s", first)
	}
	var total int
	fmt.Sscanf(first[strings.Index(first, "Tasks · 2 of ")+len("Tasks · 2 of "):], "%d", &total)
	if total < 8 {
		t.Fatalf("%d rows: too few to scroll at 80x24:\n%s", total, first)
	}
	// Every row is a different task·agent: each j must draw the cursor on
	// a new line, never lose it off the window.
	prev := cursorLine(first)
	for i := 1; i < total; i++ {
		tm.keys("j")
		s := tm.waitUntil(10*time.Second, fmt.Sprintf("the cursor on row %d of %d", i+1, total), func(s string) bool {
			l := cursorLine(s)
			return l != "" && l != prev
		})
		prev = cursorLine(s)
	}
	last := tm.screen()
	if !strings.Contains(cursorLine(last), "lean") || !strings.Contains(last, fmt.Sprintf("of %d", total)) {
		t.Fatalf("the last row should carry the cursor:\n%s", last)
	}
	tm.keys("Space")
	sel := tm.waitFor(10*time.Second, "Tasks · 3 of")
	if !strings.Contains(cursorLine(sel), "▸ [x]") {
		t.Errorf("space selected, but the cursor row shows no [x]:\n%s", sel)
	}
	for i := 1; i < total; i++ {
		tm.keys("k")
	}
	tm.waitUntil(10*time.Second, "the cursor back on the first row", func(s string) bool {
		return strings.Contains(cursorLine(s), "builtin/bn-fit-modify") && strings.Contains(cursorLine(s), "heavy")
	})
	// The other panes' cursors are marked too.
	tm.keys("Tab")
	ratios := tm.waitFor(10*time.Second, "▸[x]1x")
	if strings.Contains(ratios, "▸ [") {
		t.Errorf("the task cursor is still drawn after tab:\n%s", ratios)
	}
	tm.keys("q")
	tm.waitFor(time.Minute, "headroom exited 0")
}

// cardColumn is the screen column of the card whose title holds title.
func cardColumn(screen, title string) int {
	for _, l := range strings.Split(screen, "\n") {
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

// The demo gives 1x, 3x and uncapped each a column that they keep while
// repeats are killed and start again; the uncapped gauge is drawn to the
// 3x limit and says so; the 1x kill lands on screen.
func TestConsoleDemoRatiosKeepTheirColumns(t *testing.T) {
	tm, out := startConsole(t, "democols", 120, 40, "demo", "--repeats", "2")
	s := tm.waitFor(2*time.Minute, "t0001 1x r1", "t0002 3x r1", "t0003 uncapped r1")
	c1, c3, cu := cardColumn(s, "t0001 1x"), cardColumn(s, "t0002 3x"), cardColumn(s, "t0003 uncapped")
	if !(c1 >= 0 && c1 < c3 && c3 < cu) {
		t.Fatalf("columns 1x %d, 3x %d, uncapped %d:\n%s", c1, c3, cu, s)
	}
	if !strings.Contains(s, "bar = 384M") {
		t.Errorf("the uncapped card should be drawn to the 3x limit (384M) and say so:\n%s", s)
	}
	killed := tm.waitFor(2*time.Minute, "OOM KILLED in install")
	t.Logf("the 1x kill:\n%s", killed)
	// Each repeat 2 card opens in its ratio's column.
	for _, c := range []struct {
		title string
		col   int
	}{{"t0004 1x r2", c1}, {"t0005 3x r2", c3}, {"t0006 uncapped r2", cu}} {
		s := tm.waitFor(2*time.Minute, c.title)
		if got := cardColumn(s, c.title); got != c.col {
			t.Errorf("%s opened at column %d, its ratio's column is %d:\n%s", c.title, got, c.col, s)
		}
	}
	tm.keys("q")
	tm.waitUntil(10*time.Second, "the quit question or the exit", func(s string) bool {
		return strings.Contains(s, "Quit?") || strings.Contains(s, "headroom exited")
	})
	tm.keys("y")
	tm.waitFor(2*time.Minute, "headroom exited")
	if _, left := onlyExperiment(t, out); left > 0 {
		t.Errorf("%d container(s) left behind", left)
	}
}
