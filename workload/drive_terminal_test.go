package workload

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// driveOne runs one command through the driver and returns its streams.
func driveOne(t *testing.T, c Command) (stdout, stderr string) {
	t.Helper()
	c.End = "<end>"
	b, _ := json.Marshal(c)
	var out, errs bytes.Buffer
	if code := drive(bytes.NewReader(append(b, '\n')), &out, &errs); code != 0 {
		t.Fatalf("drive exited %d; stderr %q", code, errs.String())
	}
	return out.String(), errs.String()
}

// A terminal step's stdout and stderr are one pseudo-terminal of the
// pane's size, its stdin not; a newline stays one byte. Without
// Terminal, both are pipes.
func TestDriveGivesATerminal(t *testing.T) {
	script := `test -t 1 && echo out-tty; test -t 2 && echo err-tty >&2; test -t 0 || echo stdin-not-tty; stty size <&1 2>/dev/null; echo end`
	out, _ := driveOne(t, Command{Argv: []string{"/bin/sh", "-c", script}, Terminal: true})
	want := "out-tty\nerr-tty\nstdin-not-tty\n" + strconv.Itoa(int(TermSize.Row)) + " " + strconv.Itoa(int(TermSize.Col)) + "\nend\n<end> 0\n"
	if out != want {
		t.Errorf("a terminal step wrote %q, want %q", out, want)
	}
	out, errs := driveOne(t, Command{Argv: []string{"/bin/sh", "-c", script}})
	if strings.Contains(out+errs, "out-tty") || strings.Contains(out+errs, "err-tty") || !strings.Contains(out, "stdin-not-tty\nend\n") {
		t.Errorf("a step without Terminal: stdout %q, stderr %q; want pipes", out, errs)
	}
}

// The seventeenth attacker's 5: Python's print into a pipe buffers, and
// an os._exit loses it; into the terminal each line is written as it is
// printed, as in terminal-bench's pane.
func TestDriveTerminalKeepsWhatPythonPrinted(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 here")
	}
	argv := []string{py, "-c", `import os, sys; print("FAILED test_answer"); sys.stderr.write("logged\n"); os._exit(1)`}
	// Not unbuffered by the environment the test runs in.
	env := []string{"PYTHONUNBUFFERED="}
	out, _ := driveOne(t, Command{Argv: argv, Env: env, Terminal: true})
	if out != "FAILED test_answer\nlogged\n<end> 1\n" {
		t.Errorf("in a terminal: %q, want the printed line, then the logged one", out)
	}
	out, _ = driveOne(t, Command{Argv: argv, Env: env})
	if strings.Contains(out, "FAILED") {
		t.Errorf("into a pipe the print was kept (%q): this test no longer shows what the terminal changes", out)
	}
}

// A terminal step's output is read to its end (none lost when the step
// ends at once), and what it leaves in the background lives on: the
// terminal is not its controlling one, so its end sends no SIGHUP, and
// the background job's later writes are read (and dropped), never
// refused.
func TestDriveTerminalKeepsEverythingAndTheBackground(t *testing.T) {
	alive := filepath.Join(t.TempDir(), "alive")
	script := `i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done; (sleep 0.5; echo late; echo ok > ` + alive + `) & echo done`
	start := time.Now()
	out, errs := driveOne(t, Command{Argv: []string{"/bin/sh", "-c", script}, Terminal: true})
	if n := strings.Count(out, "\nline "); n != 19999 || !strings.HasSuffix(out, "line 19999\ndone\n<end> 0\n") {
		t.Errorf("the step's 20,000 lines arrived as %d (+1), ending %q; stderr %q", n, out[max(0, len(out)-60):], errs)
	}
	if strings.Contains(out, "late") {
		t.Error("the background job's write after the step's end was forwarded")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(alive); err == nil && string(b) == "ok\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background job did not outlive its step (%s after it began): hung up with its terminal?", time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
