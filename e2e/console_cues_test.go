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
