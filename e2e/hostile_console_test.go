//go:build hostile

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Item 1, the console's path: the experiment directory removed (rm -rf)
// while the console runs its sweep, after the first record. The console
// must stop the sweep and say so on the screen, save the records it had
// written, re-create nothing, leave no container, and exit non-zero
// naming where the records went.
func TestHostileExperimentRemovedInConsole(t *testing.T) {
	needEngine(t)
	tasks := slowTasks(t, 2500)
	tm, out := startConsole(t, "rmrf", 120, 40, "--tasks-dir", tasks, "--repeats", "3")
	tm.waitFor(5*time.Minute, "hostile-records/slow", "repeats 3")
	tm.keys("/", "hostile-records/slow")
	tm.waitFor(10*time.Second, "/hostile-records/slow")
	tm.keys("Enter", "Space")
	tm.waitFor(10*time.Second, "Tasks · 1 of", "[x] hostile-records/slow")
	// Ratios: 1x alone (3x and uncapped off).
	tm.keys("Tab", "Right", "Right", "Right", "Space", "Right", "Right", "Space")
	tm.waitFor(10*time.Second, "[ ]3x", "[ ]uncapped", "3 trials")
	tm.keys("Enter")

	// The first record, read from the file: the event a user would see
	// as the first card finished.
	var dir string
	deadline := time.Now().Add(3 * time.Minute)
	for dir == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no record within 3m:\n%s", tm.screen())
		}
		matches, _ := filepath.Glob(filepath.Join(out, "*", "trials.jsonl"))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Size() > 0 {
				dir = filepath.Dir(m)
			}
		}
		if dir == "" {
			time.Sleep(100 * time.Millisecond) // polling a file, with a deadline
		}
	}
	removeWhileWritten(t, dir)
	screen := tm.waitFor(3*time.Minute, "was removed")
	t.Logf("the console after rm -rf:\n%s", screen)
	tm.keys("q")
	tm.waitUntil(time.Minute, "the quit prompt or the exit", func(s string) bool {
		return strings.Contains(s, "Quit?") || strings.Contains(s, "headroom exited")
	})
	if strings.Contains(tm.screen(), "Quit?") {
		tm.keys("y")
	}
	end := tm.waitFor(2*time.Minute, "headroom exited")
	flat := strings.ReplaceAll(end, "\n", "")
	code := ""
	if i := strings.LastIndex(flat, "headroom exited "); i >= 0 {
		code = strings.Fields(flat[i+len("headroom exited "):])[0]
	}
	rescued := dir + ".rescued"
	if code == "0" || !strings.Contains(flat, "was removed while the sweep ran") || !strings.Contains(flat, rescued) {
		t.Errorf("exit %s after rm -rf in the console, want non-zero naming the removal and %s:\n%s", code, rescued, end)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the removed directory is back: %v", err)
	}
	recs := trialLines(t, rescued)
	lost := 0
	if len(recs) == 0 {
		lost = 1 // the record seen before the removal
	}
	letoutRow(t, "rm -rf of the experiment directory while the console runs its sweep (3 trials), after its first record",
		fmt.Sprintf("the screen says the directory was removed and the sweep stopped; on quit, exit %s, \"headroom: the experiment directory … was removed while the sweep ran: its %d record(s) and its manifest were saved to <id>.rescued\"; nothing re-created", code, len(recs)),
		lost, containersLeft(t, filepath.Base(dir)), 0)
}
