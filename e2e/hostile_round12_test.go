//go:build hostile

package e2e

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
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
