package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/session"
	"github.com/headroom-eval/headroom/store"
)

// q after a finished sweep says which experiment it was, where it is and
// how to report it, as a quit mid-sweep says how to resume it.
func TestConsoleExitNamesTheExperiment(t *testing.T) {
	root := t.TempDir()
	var sweeps []*session.Sweep
	for _, c := range []struct {
		id          string
		interrupted bool
	}{{"exp-done", false}, {"exp-cut", true}} {
		e, err := store.Create(root, store.Manifest{ID: c.id, Status: "running"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Record(event.SweepEnded{Base: event.Base{Time: time.Now()}, Interrupted: c.interrupted}); err != nil {
			t.Fatal(err)
		}
		e.Close()
		sweeps = append(sweeps, &session.Sweep{ID: c.id, Dir: filepath.Join(root, c.id)})
	}
	var out bytes.Buffer
	writeExitNotes(&out, append(sweeps, sweeps[0]), sweeps[1:], nil)
	got := out.String()
	done := "experiment exp-done in " + sweeps[0].Dir + "\nfinished: `headroom report exp-done --out " + root + "` shows its outcomes\n"
	if !strings.Contains(got, done) || strings.Count(got, "exp-done in") != 1 {
		t.Errorf("a finished sweep's exit should name it once and its report:\n%s", got)
	}
	if !strings.Contains(got, "experiment exp-cut in "+sweeps[1].Dir+"\ninterrupted:") || !strings.Contains(got, "headroom run --resume exp-cut --out "+root) {
		t.Errorf("an interrupted sweep's exit should say how to resume it:\n%s", got)
	}
}

// A panic the console recovered is a crash: it exited 0 (bubbletea wraps
// it in ErrProgramKilled, which the console took for a signal's stop).
func TestConsoleCrashExitsNonZero(t *testing.T) {
	panicked := fmt.Errorf("%w: %w", tea.ErrProgramKilled, tea.ErrProgramPanic)
	if err := consoleRunError(panicked); err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Errorf("a recovered panic ends the console with %v, want a crash", err)
	}
	if err := consoleRunError(tea.ErrProgramKilled); err != nil {
		t.Errorf("a stop by the context is no crash: %v", err)
	}
}

// Quitting the demo ends it: no "interrupted", no command to resume, and
// exit 0 (it printed "interrupted" and exited 130 after every talk); a
// sweep started from the demo's setup screen and cut short still is
// interrupted.
func TestQuittingTheDemoIsItsEnd(t *testing.T) {
	root := t.TempDir()
	demo := &session.Sweep{ID: "exp-demo", Dir: filepath.Join(root, "exp-demo")}
	other := &session.Sweep{ID: "exp-other", Dir: filepath.Join(root, "exp-other")}
	rest, ended := demoEnd([]*session.Sweep{demo, other}, []*session.Sweep{demo, other})
	if ended != demo || len(rest) != 1 || rest[0] != other {
		t.Fatalf("demoEnd: %v %v, want the demo ended and the other interrupted", rest, ended)
	}
	var out bytes.Buffer
	writeExitNotes(&out, []*session.Sweep{demo, other}, rest, ended)
	got := out.String()
	if !strings.Contains(got, "experiment exp-demo in "+demo.Dir+"\nthe demo ended: `headroom report exp-demo --out "+root+"`") || strings.Contains(got, "--resume exp-demo") {
		t.Errorf("the demo's end should say where it is and how to report it, not how to resume it:\n%s", got)
	}
	if !strings.Contains(got, "experiment exp-other in "+other.Dir+"\ninterrupted:") {
		t.Errorf("a sweep cut short is still interrupted:\n%s", got)
	}
}
