//go:build hostile

package e2e

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
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
