//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// Round fourteen, the fifteenth attacker's 1: a step that prints short
// pieces with no newline, a command each (`printf .` in a loop), ended a
// line at every trace line, and the line so far was copied whole each
// time: 400,000 dots took 31 s and 24 s of headroom's CPU where docker
// run takes 2 s, and 600,000 ran past a 30 s agent timeout, charged to
// the task. Now linear: the dots cost headroom a few seconds of CPU.
func TestHostileR14DotsWithoutNewline(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r14/dots"
	harborTask(t, tasks, "dots", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\nfor i in $(seq 400000); do printf .; done\necho\necho hi > /tmp/out.txt\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\nif grep -q hi /tmp/out.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	// Before: 24 s of CPU at 400,000 dots, growing with their square;
	// after, about 2.5 s here (a tenth of a second a 10,000 dots,
	// linear). A bound four times that holds on a loaded host.
	passedWithin(t, runOracleRow(t, bin, tasks, name, ""), 10*time.Second, "Harbor task: solve.sh prints 400,000 dots, a `printf .` each, then a newline")
}

// passedWithin is the row of a task that must pass with at most bound of
// headroom's CPU (its user and system time): headroom's own cost, which
// must never become the task's timeout.
func passedWithin(t *testing.T, row oracleRow, bound time.Duration, input string) {
	t.Helper()
	forged := 0
	if row.outcome != "passed" || row.run.cpu > bound {
		forged++
		t.Errorf("exit %d: %s · %s: %s; headroom's CPU %v (want passed, at most %v)\n%s", row.run.code, row.outcome, orNone(row.cause), row.reason, row.run.cpu.Round(time.Millisecond), bound, row.run.stderr)
	}
	letoutRow(t, input, fmt.Sprintf("%s, headroom's CPU %v, %v in all", row.outcome, row.run.cpu.Round(100*time.Millisecond), row.run.elapsed.Round(100*time.Millisecond)),
		1-len(row.recs), row.left, forged)
}

// Round fourteen, the fifteenth attacker's 3: terminal-bench types its
// commands into a tmux pane, whose TERM is tmux-256color; headroom's
// steps had the engine's TERM=dumb, and a run-tests.sh that asks tput
// for bold under `set -e` ended there, failed where the harness passes
// it. (The pane's terminal itself is not given: a listed deviation.)
func TestHostileR14TerminalBench1PaneTerm(t *testing.T) {
	bothRunnersRow(t, "hostile-r14-tb1-term", map[string]string{
		"task.yaml":   "instruction: Write hello.\nparser_name: pytest\nmax_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 120.0\n",
		"Dockerfile":  "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
		"solution.sh": "#!/bin/bash\nset -e\necho \"$(tput bold)hello$(tput sgr0)\" > /app/hello.txt\n",
		"run-tests.sh": "#!/bin/bash\nset -e\necho \"TERM=[$TERM]\"\nbold=$(tput bold); normal=$(tput sgr0)\ngrep -q hello /app/hello.txt\n" +
			"echo \"${bold}=== short test summary info ===${normal}\"\necho 'PASSED tests/test_outputs.py::test_hello'\n",
	}, model.Passed, "", "tb1 reads the pane, TERM=tmux-256color: tput works",
		"terminal-bench 1 task: solution.sh and run-tests.sh call `tput bold` under `set -e`")
}

// Round fourteen, the fifteenth attacker's 7: under --exec-steps a step
// lasted while anything held its output stream, the trace's descriptor
// too: a reward a background job wrote half a second after test.sh had
// ended counted, and a result line printed so after run-tests.sh had.
// Under the step driver neither did, nor under Harbor (whose exec has no
// such descriptor: the job's output went to /dev/null) or terminal-bench
// (which reads the pane when the script ends). Both runners now agree.
func TestHostileR14LateRewardIsNotTheSteps(t *testing.T) {
	bothRunnersRow(t, "hostile-r14/late-reward", map[string]string{
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n(sleep 0.5; echo 1 > /logs/verifier/reward.txt) >/dev/null 2>&1 &\n",
	}, model.Failed, "", "Harbor reads the reward when the verifier's exec returns: 0",
		"Harbor task: test.sh writes reward 0, and a background job with no output writes 1 half a second later")
}

func TestHostileR14LateResultLineIsNotTheSteps(t *testing.T) {
	bothRunnersRow(t, "hostile-r14-tb1-late", map[string]string{
		"task.yaml":    "instruction: Write hello.\nparser_name: pytest\nmax_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 120.0\n",
		"Dockerfile":   "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
		"solution.sh":  "#!/bin/bash\necho hello > /app/hello.txt\n",
		"run-tests.sh": "#!/bin/bash\necho '=== short test summary info ==='\necho 'FAILED tests/test_outputs.py::test_b - assert False'\n(sleep 0.5; echo 'PASSED tests/test_outputs.py::test_b') &\n",
	}, model.Failed, "", "terminal-bench reads the pane when run-tests.sh ends: test_b FAILED",
		"terminal-bench 1 task: run-tests.sh prints test_b FAILED, and a background job prints it PASSED half a second later")
}
