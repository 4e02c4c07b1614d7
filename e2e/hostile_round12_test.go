//go:build hostile

package e2e

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// Round twelve, the trace's channel: headroom traces a step's script
// with `bash -x`, whose trace lines went to the script's own stderr. A
// script that captures its stderr saw them: `out=$(check 2>&1)` of a
// function held "++ echo ok" beside "ok", a `{ …; } 2>&1` group's output
// too, and `exec 2>FILE` wrote them into FILE. Under Harbor, which runs
// test.sh without a trace, each holds only what the script printed.
func TestHostileR12TraceOutOfTheScriptsStderr(t *testing.T) {
	bothRunnersRow(t, "hostile-r12/trace-stderr", map[string]string{
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\ncheck() { echo ok; }\nfail() { echo \"$1\"; echo 0 > /logs/verifier/reward.txt; exit 0; }\n" +
			"out=$(check 2>&1)\n[ \"$out\" = ok ] || fail \"function: $out\"\n" +
			"n=$( { echo a; echo b; } 2>&1 | wc -l)\n[ \"$n\" = 2 ] || fail \"group: $n lines\"\n" +
			"exec 3>&2 2>/tmp/err.log\necho e >&2\nexec 2>&3 3>&-\n[ \"$(cat /tmp/err.log)\" = e ] || fail \"stderr file: $(cat /tmp/err.log)\"\n" +
			"echo 1 > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "Harbor runs test.sh untraced: what the script captures of its own stderr is what it printed",
		"Harbor task: test.sh captures `$(check 2>&1)` of a function, counts the lines of `{ echo a; echo b; } 2>&1`, and sends its stderr to a file with `exec 2>FILE`; reward 1 only if each holds only what the script printed")
}

// Round twelve, terminal-bench 1's shell: that harness types each command
// (the oracle's `bash solution.sh`, the verifier's `bash run-tests.sh`)
// into a tmux session, whose shell is an interactive login bash: what
// the image's ~/.bashrc exports past its interactive guard (conda's and
// nvm's PATH lines sit there) is in the tests' environment. headroom ran
// run-tests.sh from a plain exec, where the tool was not found.
func TestHostileR12TerminalBench1LoginShell(t *testing.T) {
	bothRunnersRow(t, "hostile-r12-tb1-bashrc", map[string]string{
		"task.yaml": "instruction: Do the task.\nparser_name: pytest\nmax_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 120.0\n",
		"Dockerfile": "FROM " + docker.DebianImage + "\nRUN mkdir -p /opt/tool/bin && printf '#!/bin/sh\\necho tool-ok\\n' > /opt/tool/bin/checktool && chmod +x /opt/tool/bin/checktool" +
			" && printf '[ -z \"$PS1\" ] && return\\nexport PATH=/opt/tool/bin:$PATH\\n' > /root/.bashrc\n",
		"solution.sh": "#!/bin/bash\ncheckt\"ool\" > /tmp/solved\n",
		"run-tests.sh": "#!/bin/bash\necho '=================== short test summary info ==================='\n" +
			"if [ \"$(cat /tmp/solved 2>/dev/null)\" = tool-ok ] && [ \"$(checktool)\" = tool-ok ]; then echo 'PASSED tests/test_outputs.py::test_tool'; else echo 'FAILED tests/test_outputs.py::test_tool - checktool not on PATH'; fi\n",
	}, model.Passed, "", "terminal-bench runs solution.sh and run-tests.sh from its tmux session's interactive login bash, which read ~/.bashrc",
		"terminal-bench 1 task whose image's ~/.bashrc, past an interactive guard, puts /opt/tool/bin on PATH; solution.sh and run-tests.sh run checktool from there")
}

// Round twelve, the twelfth attacker's 1: Harbor runs its verifier as
// `bash test.sh | tee FILE`, a pipeline that ends when the tee has read
// all its input, so a job test.sh leaves in the background with its
// stdout open is waited for. headroom's tee was a process substitution
// nobody waited for: a test.sh whose background job writes the reward 3
// s later failed where Harbor passes it.
func TestHostileR12VerifierWaitsForItsPipeline(t *testing.T) {
	bothRunnersRow(t, "hostile-r12/verifier-pipeline", map[string]string{
		"solution/solve.sh": "#!/bin/bash\necho solved > /app/out.txt\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n" +
			"( sleep 3; [ -f /app/out.txt ] && echo 1 > /logs/verifier/reward.txt; echo graded ) &\necho started\n",
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
	}, model.Passed, "", "Harbor's `bash test.sh | tee` waits for the job holding its stdout, which writes reward 1",
		"Harbor task: test.sh writes reward 0, starts `( sleep 3; … echo 1 > reward.txt; echo graded ) &` with its stdout open, and ends")
}

// Round twelve, the twelfth attacker's 2: a job solve.sh leaves in the
// background (`a && b &`, or a subshell with its output sent elsewhere)
// went on past the step and died at its next traced command: the step driver closed the step's pipe a
// second after the step, and the job's trace line was its SIGPIPE. Under
// Harbor, which traces nothing, it writes its file 3 s on. (Under
// --exec-steps the engine closes the exec's pipe: there it dies as
// before; docs/RELIABILITY.md.)
func TestHostileR12BackgroundJobOutlivesItsStep(t *testing.T) {
	oracleVerdictRow(t, "hostile-r12/background-job", map[string]string{
		"solution/solve.sh":      "#!/bin/bash\nsleep 3 && echo done > /app/late.txt &\n( sleep 3; echo done > /app/late2.txt ) >/dev/null 2>&1 &\necho started\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nsleep 6\nif [ \"$(cat /app/late.txt /app/late2.txt 2>/dev/null)\" = \"done\ndone\" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
	}, model.Passed, "", "under Harbor the background job writes /app/late.txt 3 s on, before the verifier reads it at 6 s",
		"Harbor task: solve.sh starts `sleep 3 && echo done > /app/late.txt &` and `( sleep 3; echo done > /app/late2.txt ) >/dev/null 2>&1 &` and ends; test.sh sleeps 6 s and passes if both say done (step driver)")
}
