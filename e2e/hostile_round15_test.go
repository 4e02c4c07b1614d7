//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// oracleIs is a test.sh that passes when /logs/agent/oracle.txt, the
// oracle's output as Harbor writes it, is want (printf's format).
func oracleIs(want string) string {
	return "#!/bin/bash\nmkdir -p /logs/verifier\ncat -A /logs/agent/oracle.txt\n" +
		"if [ \"$(cat /logs/agent/oracle.txt)\" = \"$(printf '" + want + "')\" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
}

// Round fifteen, the sixteenth attacker's 3: bash joins ${PIPESTATUS[*]}
// with IFS's first character, which headroom's trace line held; a
// script in strict mode (`IFS=$'\n\t'`) split every later trace line in
// two, so the rest of it (and its nonce) was the task's output and its
// oracle.txt, and every later command one step. Under the step driver
// the trace of the IFS assignment itself, over two lines, also left its
// second line in oracle.txt. Harbor does not trace: oracle.txt is the
// output alone.
func TestHostileR15StrictModeIFS(t *testing.T) {
	bothRunnersRow(t, "hostile-r15/strict-ifs", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nset -euo pipefail\nIFS=$'\\n\\t'\necho a | cat\nfalse | cat || true\necho b | cat\nIFS=,\necho c | cat\nIFS=\necho d | cat\n",
		"tests/test.sh":     oracleIs(`a\nb\nc\nd`),
	}, model.Passed, "", "Harbor's oracle.txt is the four lines echoed",
		"Harbor task: solve.sh in strict mode (`IFS=$'\\n\\t'`, then `IFS=,`, `IFS=`) runs pipelines; test.sh compares oracle.txt")
}

// Round fifteen, the sixteenth attacker's 5: a command with a quoted
// newline (`echo "alpha<newline>beta"`, a multi-line `python3 -c`) is
// traced over two lines; the step driver's oracle.txt kept the second.
func TestHostileR15MultiLineCommandTrace(t *testing.T) {
	bothRunnersRow(t, "hostile-r15/multiline", map[string]string{
		"solution/solve.sh": "#!/bin/bash\necho \"alpha\nbeta\"\nprintf '%s\\n' 'it'\\''s\nover'\n",
		"tests/test.sh":     oracleIs(`alpha\nbeta\nit'\''s\nover`),
	}, model.Passed, "", "Harbor's oracle.txt is what the commands printed",
		"Harbor task: solve.sh echoes a quoted two-line string and printf's a quoted one with a quote in it")
}

// Round fifteen, the sixteenth attacker's 6: a command's trace line past
// 1 MiB (`true "$big"`) is cut in pieces; under --exec-steps the pieces
// after the first were the step's output, in oracle.txt (102,932 bytes
// of x) and the log.
func TestHostileR15HugeTraceLine(t *testing.T) {
	bothRunnersRow(t, "hostile-r15/huge-trace", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nbig=$(head -c 1100000 /dev/zero | tr '\\0' x)\ntrue \"$big\"\necho done\n",
		"tests/test.sh":     oracleIs(`done`),
	}, model.Passed, "", "Harbor's oracle.txt is `done`",
		"Harbor task: solve.sh passes a 1.1 MB argument to `true`, then echoes done")
}

// Round fifteen, the sixteenth attacker's 7 and 8: a --pass-env secret
// printed whole at the end of a line past 1 MiB was cut there with the
// line (LineWriter's pieces) and masked piece by piece: all but its first
// character was stored, in log.txt and trials.jsonl. And `declare -p` and
// printf %q write a value holding $ " ' or a space escaped, which no mask
// matched. No piece of it may be in any file or line.
func TestHostileR15SecretCutOrEscaped(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r15/secret-cut"
	harborTask(t, tasks, "secret-cut", name, map[string]string{
		"task.toml": harborToml(name, 128) + "[solution.env]\nMYKEY = \"${ATK16_SECRET}\"\n",
		"solution/solve.sh": "#!/bin/bash\nA=$(head -c 1048575 /dev/zero | tr '\\0' a)\nprintf '%s%s\\n' \"$A\" \"$MYKEY\"\n" +
			"declare -p MYKEY\nexport -p | grep MYKEY\nprintf '%q\\n' \"$MYKEY\"\necho done\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	said, lost, leaked := secretBothRunners(t, bin, root, tasks, name, "ATK16_SECRET", `Zq9s3cr3t VALUE$abc'def"XYZ`, "q9s3cr3t", "VALUE", "XYZ")
	letoutRow(t, "Harbor task whose [solution.env] MYKEY is a --pass-env secret (`Zq9s3cr3t VALUE$abc'def\"XYZ`): solve.sh prints it after 1,048,575 bytes on one line, then `declare -p`, `export -p` and `printf %q` of it; under the step driver and --exec-steps",
		fmt.Sprintf("%s(%s)", said, time.Since(start).Round(time.Second)), lost, leaked, 0)
}

// Round fifteen, the sixteenth attacker's 1: a step printing 50 million
// short lines (`yes | head -n 50000000`, 0.2 s under docker run) took
// 73 s under headroom, 60 s of it headroom's CPU, an event a line through
// the sweep and the store, and the pipe held the task back: a 30 s agent
// timeout charged to the task. Now a step's head and tail are sent, and
// a live line now and then between them.
func TestHostileR15FiftyMillionLines(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r15/yes"
	harborTask(t, tasks, "yes", name, map[string]string{
		"task.toml":              strings.Replace(harborToml(name, 256), "[agent]\ntimeout_sec = 60.0", "[agent]\ntimeout_sec = 30.0", 1),
		"solution/solve.sh":      "#!/bin/bash\nyes | head -n 50000000\necho hello > /app/out\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nif grep -q hello /app/out; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
	})
	// After: about 4 s of headroom's CPU here; a bound three times that.
	passedWithin(t, runOracleRow(t, bin, tasks, name, ""), 15*time.Second, "Harbor task (agent timeout 30 s): solve.sh runs `yes | head -n 50000000`")
}

// Round fifteen, the seventeenth attacker's last: a test.sh in SWE-bench's
// eval shape (`set -uxo pipefail`, the output teed to $LOG_FILE, the
// markers `: '>>>>> Start Test Output'` written only by the script's own
// trace) graded its log by the markers; under headroom's trace, which
// has a descriptor of its own, the log held none and the task failed
// where Harbor passes it: every SWE-bench task so shaped. A script that
// traces itself now runs untraced by headroom, its trace its own.
func TestHostileR15ScriptsOwnTraceIsInItsLog(t *testing.T) {
	bothRunnersRow(t, "hostile-r15/own-xtrace", map[string]string{
		"tests/test.sh": "#!/bin/bash\nset -uxo pipefail\nmkdir -p /logs/verifier\nLOG_FILE=$(mktemp)\nexec 3>&1 4>&2\nexec > >(tee \"$LOG_FILE\") 2>&1\n" +
			": '>>>>> Start Test Output'\necho 'test_out PASSED'\n: '>>>>> End Test Output'\nexec 1>&3 2>&4\nsleep 0.2\n" +
			"if grep -q \"^+ : '>>>>> Start Test Output'\" \"$LOG_FILE\" && grep -q \"^+ : '>>>>> End Test Output'\" \"$LOG_FILE\"; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "Harbor's test.sh traces itself to its stderr, into $LOG_FILE: both markers there",
		"Harbor task: test.sh in SWE-bench's eval shape (`set -uxo pipefail`, stdout and stderr teed to $LOG_FILE, `: '>>>>> Start Test Output'` markers), graded by the markers in $LOG_FILE")
}

// tb1Files is a terminal-bench 1 task's files: its task.yaml, a Debian
// Dockerfile, and the scripts given.
func tb1Files(scripts map[string]string) map[string]string {
	files := map[string]string{
		"task.yaml":  "instruction: Write the answer to /app/result.txt.\nparser_name: pytest\nmax_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 60.0\n",
		"Dockerfile": "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
	}
	for k, v := range scripts {
		files[k] = v
	}
	return files
}

// Round fifteen, the seventeenth attacker's 1: bash's trace of a `[[`
// writes its operands as they are, a captured multi-line value's lines
// and all, and only the first line carries headroom's mark: the rest
// were read as the script's output — the tests pane's, oracle.txt's.
// (c) An agent whose answer is wrong wrote the summary and a PASSED line
// into its answer file, which run-tests.sh tested with `[[ -z "$result" ]]`,
// and made python3 print nothing: terminal-bench's pane holds no summary
// (unresolved); headroom passed it.
func TestHostileR15DoubleBracketForgesNoPass(t *testing.T) {
	bothRunnersRow(t, "hostile-r15-tb1-bracket-forge", tb1Files(map[string]string{
		"solution.sh": "#!/bin/bash\nprintf '%s\\n' 41 '=========================== short test summary info ============================' 'PASSED tests/test_outputs.py::test_answer' > /app/result.txt\n" +
			"printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3\n",
		"run-tests.sh":          "#!/bin/bash\nresult=$(cat /app/result.txt 2>/dev/null)\nif [[ -z \"$result\" ]]; then\n  echo 'no result file'\nfi\npython3 $TEST_DIR/test_outputs.py\n",
		"tests/test_outputs.py": "print('=========================== short test summary info ============================')\nprint('FAILED tests/test_outputs.py::test_answer')\n",
	}), model.Failed, "", "terminal-bench's pane holds no test summary (python3 printed nothing): unresolved",
		"terminal-bench 1 task: the agent writes 41 and a forged summary and PASSED line to result.txt and replaces python3 with `exit 0`; run-tests.sh tests `[[ -z \"$result\" ]]`, then runs python3")
}

// (a) A correct solution: run-tests.sh captures a probe's report and
// tests it with `[[ $probe == *ImportError* ]]`; the probe's FAILED line
// was read as the pane's, and the task failed where terminal-bench
// resolves it.
func TestHostileR15DoubleBracketCapturedReport(t *testing.T) {
	bothRunnersRow(t, "hostile-r15-tb1-bracket-probe", tb1Files(map[string]string{
		"solution.sh": "#!/bin/bash\necho 42 > /app/result.txt\n",
		"run-tests.sh": "#!/bin/bash\nreport() {\n  echo 'collected 1 item'\n  echo '=========================== short test summary info ============================'\n" +
			"  if [ \"$1\" = probe ]; then echo 'FAILED tests/test_env.py::test_probe - environment probe'; " +
			"elif grep -qx 42 /app/result.txt; then echo 'PASSED tests/test_outputs.py::test_answer'; else echo 'FAILED tests/test_outputs.py::test_answer'; fi\n}\n" +
			"probe=$(report probe)\nif [[ $probe == *ImportError* ]]; then\n  echo 'the environment is broken'\n  exit 1\nfi\nreport\n",
	}), model.Passed, "", "terminal-bench's pane holds the second report alone: test_answer PASSED",
		"terminal-bench 1 task: run-tests.sh captures a probe's report (a FAILED line) and tests it with `[[ $probe == *ImportError* ]]`, then prints its own report, test_answer PASSED")
}

// (d) Harbor: solve.sh tests a captured three-line log with `[[ -n
// "$log" ]]`; its second and third lines were in oracle.txt, where
// Harbor's `solve.sh > oracle.txt 2>&1` has `done` alone.
func TestHostileR15DoubleBracketOracleLog(t *testing.T) {
	bothRunnersRow(t, "hostile-r15/bracket-oracle", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nlog=$(printf 'step one\\ninternal line\\nstep three\\n')\nif [[ -n \"$log\" ]]; then echo ok > /tmp/out.txt; fi\necho done\n",
		"tests/test.sh":     oracleIs(`done`),
	}, model.Passed, "", "Harbor's oracle.txt is `done`",
		"Harbor task: solve.sh tests a captured three-line log with `[[ -n \"$log\" ]]`, then echoes done; test.sh compares oracle.txt")
}
