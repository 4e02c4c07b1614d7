//go:build hostile

package e2e

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// Round sixteen, the seventeenth attacker's 5: terminal-bench types
// run-tests.sh into a tmux pane, so the tests' programs write to a
// terminal, where Python's print flushes at each line; headroom gave
// them a pipe, where print buffers in blocks. (c) A test runner that
// ends by os._exit lost its last, unflushed line: an agent's wrong
// answer, whose FAILED line was that one, passed on the PASSED line
// flushed before it. terminal-bench's pane shows the FAILED line. The
// step driver now gives terminal-bench's steps a pseudo-terminal;
// --exec-steps still gives them pipes (listed in docs/PARITY.md).
func TestHostileR16UnflushedFailureForgesNoPass(t *testing.T) {
	driverRow(t, "hostile-r16-tb1-exit-unflushed", tb1Files(map[string]string{
		"solution.sh":  "#!/bin/bash\necho 41 > /app/result.txt\n",
		"run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py\n",
		"tests/test_outputs.py": "import os\nok = open('/app/result.txt').read().strip() == '42'\n" +
			"print('=========================== short test summary info ============================', flush=True)\n" +
			"print('PASSED tests/test_outputs.py::test_result_exists', flush=True)\n" +
			"print(('PASSED' if ok else 'FAILED') + ' tests/test_outputs.py::test_answer')\nos._exit(0 if ok else 1)\n",
	}), model.Failed, "test_answer", "terminal-bench's pane shows FAILED test_answer: Python's print flushes each line into a terminal",
		"terminal-bench 1 task, a wrong answer (41): the tests print the summary and a PASSED line flushed, then the FAILED line unflushed, and end by os._exit")
}

// (a) The other way: a correct answer failed. A runner that prints each
// test's line as it runs (stdout) and logs the summary (stderr, which
// Python never buffers): in the pane, in the order written, the earlier
// run's FAILED line is above the summary; through a pipe, stdout came
// out at the exit, below it, and the parser read it as the summary's.
func TestHostileR16PrintAndLogInOrder(t *testing.T) {
	driverRow(t, "hostile-r16-tb1-print-log-order", tb1Files(map[string]string{
		"solution.sh":  "#!/bin/bash\necho 42 > /app/result.txt\n",
		"run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py\n",
		"tests/test_outputs.py": "import logging, sys\nlogging.basicConfig(level=logging.INFO, format='%(message)s')\n" +
			"print('first attempt (retried):')\nprint('FAILED tests/test_outputs.py::test_answer - result.txt not written yet')\n" +
			"ok = open('/app/result.txt').read().strip() == '42'\n" +
			"logging.info('=========================== short test summary info ============================')\n" +
			"logging.info(('PASSED' if ok else 'FAILED') + ' tests/test_outputs.py::test_answer')\nsys.exit(0 if ok else 1)\n",
	}), model.Passed, "", "terminal-bench's pane has the retried FAILED line above the summary, PASSED in it",
		"terminal-bench 1 task, a right answer: the tests print a first attempt's FAILED line (stdout), then log the summary and PASSED (stderr)")
}

// The sixteenth attacker's 4 and 11, the seventeenth's 4: a script that
// looks at headroom's trace or changes it. (d) solve.sh assigns PS4, as
// scripts set it for their own debugging: its later commands' trace
// lines, no longer marked, were its output, in oracle.txt. Harbor, which
// traces nothing, has `done` alone.
func TestHostileR16ScriptAssignsPS4(t *testing.T) {
	bothRunnersRow(t, "hostile-r16/ps4", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nPS4='+ ${BASH_SOURCE}:${LINENO}: '\necho done\n",
		"tests/test.sh":     oracleIs(`done`),
	}, model.Passed, "", "Harbor's oracle.txt is `done`",
		"Harbor task: solve.sh assigns PS4 ('+ ${BASH_SOURCE}:${LINENO}: '), then echoes done; test.sh compares oracle.txt")
}

// (d) solve.sh exports SHELLOPTS, then runs a bash script: the child
// took xtrace from it and wrote "+ echo child" to its stderr, into
// oracle.txt.
func TestHostileR16ScriptExportsShellopts(t *testing.T) {
	bothRunnersRow(t, "hostile-r16/shellopts", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nset -o pipefail\nexport SHELLOPTS\nbash -c 'echo child'\n",
		"tests/test.sh":     oracleIs(`child`),
	}, model.Passed, "", "Harbor's oracle.txt is `child`: nothing is traced",
		"Harbor task: solve.sh exports SHELLOPTS, then runs `bash -c 'echo child'`; test.sh compares oracle.txt")
}

// (d) solve.sh reads `$-`: traced, it held x.
func TestHostileR16ScriptReadsItsOptions(t *testing.T) {
	bothRunnersRow(t, "hostile-r16/dash-options", map[string]string{
		"solution/solve.sh": "#!/bin/bash\ncase $- in *x*) echo traced;; *) echo plain;; esac\n",
		"tests/test.sh":     oracleIs(`plain`),
	}, model.Passed, "", "Harbor's oracle.txt is `plain`: $- holds no x",
		"Harbor task: solve.sh echoes traced or plain by whether $- holds x; test.sh compares oracle.txt")
}

// The eighteenth attacker's 5: (a) a grader that prints the reward
// object and then a line of its own into reward.json. Python's
// json.loads refuses the file ("Extra data"), so Harbor has no reward
// (a VerifierOutputParseError, counted 0); headroom refused only a
// second valid token after the object, and passed it.
func TestHostileR16RewardJSONTrailingText(t *testing.T) {
	bothRunnersRow(t, "hostile-r16/reward-json-tail", map[string]string{
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nprintf '{\"reward\": 1.0}\\ngraded 1 check\\n' > /logs/verifier/reward.json\n",
	}, model.Failed, "more after its object", "json.loads refuses reward.json (Extra data): no reward",
		"Harbor task: test.sh writes `{\"reward\": 1.0}` then `graded 1 check` into reward.json")
}
