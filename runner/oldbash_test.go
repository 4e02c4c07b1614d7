package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// On a bash older than 5.0 the setup sets $! before the script
// (traceOldBashJob), so that PS4's ${!:-0} holds under `set -u`; the
// statement is checked here with this machine's bash, whatever its
// version (HEADROOM_OLD_BASH runs the whole wrapper with an old one).
func TestOldBashSetupSetsTheBackgroundJob(t *testing.T) {
	if !strings.Contains(traceSetupTail, "${!:-0}] '; [ \"${BASH_VERSINFO[0]}\" -ge 5 ] || "+traceOldBashJob) {
		t.Fatalf("the setup no longer runs traceOldBashJob after setting PS4:\n%s", traceSetupTail)
	}
	out, err := exec.Command("bash", "-c", `set -u; `+traceOldBashJob+`; echo "${!}"`).Output()
	if err != nil {
		t.Skipf("no bash: %v", err)
	}
	if s := strings.TrimSpace(string(out)); s == "" || strings.Trim(s, "0123456789") != "" {
		t.Errorf("$! after traceOldBashJob is %q, want a pid", s)
	}
}

// The eighteenth attacker's 1 and 4: with a bash older than 5.1 (its
// path in HEADROOM_OLD_BASH, a program that runs it: Ubuntu 18.04's
// 4.4.18 and 20.04's 5.0.16 were checked so), a traced script in strict
// mode runs, each command its step, and its stdin is empty (before 5.1
// bash writes the setup's here-document to a file, and the script's
// stdin held it). Skipped where none is given: no archive of old bash is
// reachable from this project's CI.
func TestTracedStrictModeWithOldBash(t *testing.T) {
	old := os.Getenv("HEADROOM_OLD_BASH")
	if old == "" {
		t.Skip("HEADROOM_OLD_BASH is not set (a bash older than 5.0 to run the wrapper with)")
	}
	if v, err := exec.Command(old, "-c", `echo ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}`).Output(); err != nil || strings.TrimSpace(string(v)) >= "5.1" {
		t.Fatalf("HEADROOM_OLD_BASH=%s: version %q (%v), want older than 5.1", old, v, err)
	}
	shim := t.TempDir()
	if err := os.Symlink(old, filepath.Join(shim, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shim+":"+os.Getenv("PATH"))
	// Started by bash, as Harbor's and terminal-bench's steps are: the
	// setup's here-document is then bash's.
	lines, code := runWrappedBy(t, "set -euo pipefail\necho a\nfalse || echo b\nsleep 0.1 &\nwait\nread -r x || echo c\n", false, true)
	got := describe(replay(lines, code))
	want := "set -euo pipefail => 0 []\necho a => 0 [\"a\"]\nfalse => 1 []\necho b => 0 [\"b\"]\nsleep 0.1 => ? []\nwait => 0 []\nread -r x => 1 []\necho c => 0 [\"c\"]\n"
	if code != 0 || sortLines(got) != sortLines(want) {
		t.Errorf("exit %d; got\n%s\nwant\n%s\nraw %q", code, got, want, lines)
	}
}
