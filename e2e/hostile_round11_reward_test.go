//go:build hostile

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// The tenth attacker's item 8: Harbor reads a verifier's reward from its
// bind-mounted /logs/verifier with Python (read_text, following links, no
// bound), so a reward.txt of a 1 and 2 MB of newlines, or a reward.txt
// that is a relative link to real.txt beside it, passes there; here both
// failed ("larger than 1 MiB", "a symbolic link"), under the step driver
// and --exec-steps alike. Both are read now; a relative link that leaves
// the directory for /proc/1/environ (the driver is PID 1) is still
// refused, in both runners, as is a reward past model.MaxRewardFileBytes
// (64 MiB: Harbor would read it; no verifier writes one).
func TestHostileR11RewardAsHarborReadsIt(t *testing.T) {
	for _, c := range []struct {
		name, verifier string
		want           model.Outcome
		reasonHas      string
	}{
		{"two-mb", "{ echo 1; head -c 2000000 /dev/zero | tr '\\0' '\\n'; } > /logs/verifier/reward.txt", model.Passed, ""},
		{"sixty-mb", "{ echo 1; head -c 60M /dev/zero | tr '\\0' ' '; } > /logs/verifier/reward.txt", model.Passed, ""},
		{"over-the-bound", "{ echo 1; head -c 65M /dev/zero | tr '\\0' ' '; } > /logs/verifier/reward.txt", model.Failed, "larger than 64MiB"},
		{"link-beside", "echo 1 > /logs/verifier/real.txt && ln -s real.txt /logs/verifier/reward.txt", model.Passed, ""},
		{"link-to-environ", "ln -s ../../proc/1/environ /logs/verifier/reward.txt", model.Failed, "symbolic link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "hostile-r11/reward-" + c.name
			bothRunnersRow(t, name, map[string]string{
				"task.toml":     harborToml(name, 128),
				"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n" + c.verifier + "\n",
			}, c.want, c.reasonHas, "Harbor reads the bind mount's file with Python, following a link, without a bound",
				"Harbor task whose verifier runs `"+c.verifier+"`, under the step driver and --exec-steps")
		})
	}
}

// bothRunnersRow is oracleVerdictRow under the step driver and under
// --exec-steps: each run's outcome must be want, its reason say
// reasonHas.
func bothRunnersRow(t *testing.T, name string, files map[string]string, want model.Outcome, reasonHas, why, input string) {
	t.Helper()
	preparedRow(t, name, files, nil, want, reasonHas, why, input)
}

// preparedRow is bothRunnersRow with prepare called on the task's
// directory once its files are written (modes git cannot hold).
func preparedRow(t *testing.T, name string, files map[string]string, prepare func(dir string), want model.Outcome, reasonHas, why, input string) {
	t.Helper()
	runnersRow(t, [][]string{nil, {"--exec-steps"}}, name, files, prepare, want, reasonHas, why, input)
}

// driverRow is bothRunnersRow under the step driver alone, for what
// --exec-steps is documented not to do.
func driverRow(t *testing.T, name string, files map[string]string, want model.Outcome, reasonHas, why, input string) {
	t.Helper()
	runnersRow(t, [][]string{nil}, name, files, nil, want, reasonHas, why, input)
}

// runnersRow runs the row under each runner (extra arguments: nil for
// the step driver).
func runnersRow(t *testing.T, runners [][]string, name string, files map[string]string, prepare func(dir string), want model.Outcome, reasonHas, why, input string) {
	t.Helper()
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	tasks := filepath.Join(t.TempDir(), "tasks")
	if _, tb1 := files["task.yaml"]; tb1 {
		// A terminal-bench 1 task: its files as given, named by its
		// directory as that format names a task.
		writeFiles(t, filepath.Join(tasks, name), files)
	} else {
		harborTask(t, tasks, strings.NewReplacer("/", "-").Replace(name), name, files)
	}
	if prepare != nil {
		if _, tb1 := files["task.yaml"]; tb1 {
			prepare(filepath.Join(tasks, name))
		} else {
			prepare(filepath.Join(tasks, strings.NewReplacer("/", "-").Replace(name)))
		}
	}
	t.Cleanup(func() { removeTaskImages(t, name) })
	forged, lost, left := 0, 0, 0
	var said []string
	for _, extra := range runners {
		out := filepath.Join(t.TempDir(), "out")
		run := runBin(t, bin, nil, append(oracleArgs(tasks, name, out), extra...)...)
		if _, err := os.Stat(out); err != nil {
			// Said with headroom's own words (once a bare "no such file").
			t.Fatalf("headroom %q made no experiment (exit %d): %s", extra, run.code, run.stderr)
		}
		_, recs, l := records(t, out)
		left += l
		lost += 1 - len(recs)
		outcome, cause, reason := oneRecord(recs)
		runner := "the step driver"
		if extra != nil {
			runner = "--exec-steps"
		}
		if outcome != string(want) || !strings.Contains(reason, reasonHas) {
			forged++
			t.Errorf("%s: %s · %s %q; want %s (%s)\n%s", runner, outcome, cause, reason, want, why, run.stderr)
		}
		said = append(said, fmt.Sprintf("%s: exit %d; %s · %s: %q", runner, run.code, outcome, orNone(cause), shmClip(reason)))
	}
	letoutRow(t, input, strings.Join(said, "; ")+fmt.Sprintf(" (%s)", time.Since(start).Round(time.Second)), lost, left, forged)
}
