//go:build hostile

package e2e

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// Round eleven, Harbor's verifier output: Harbor runs the verifier as
// `bash /tests/test.sh | tee /logs/verifier/test-stdout.txt`, so a test
// may read its own stdout back from that file. headroom ran test.sh
// alone: the file never existed and such a test wrote reward 0.
func TestHostileR11HarborTestStdoutFile(t *testing.T) {
	bothRunnersRow(t, "hostile-r11/test-stdout", map[string]string{
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 'answer: 42'\necho 'to stderr' >&2\nsleep 0.5\n" +
			"if grep -q '^answer: 42$' /logs/verifier/test-stdout.txt && ! grep -q 'hr \\|^+' /logs/verifier/test-stdout.txt; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
	}, model.Passed, "", "Harbor puts test.sh's stdout in /logs/verifier/test-stdout.txt (whether its stderr goes there too differs between Harbor's versions, so the row does not ask)",
		"Harbor task: test.sh echoes `answer: 42` (and a line to stderr), sleeps 0.5 s, writes reward 1 only if /logs/verifier/test-stdout.txt holds the answer and no trace line of headroom's")
}

// Round eleven, Harbor's bash: Harbor runs every command in the task's
// container as `bash -c …`; an image without bash cannot run the oracle
// or the verifier there (127, no reward). headroom fell back to `sh -x`
// and passed the trial.
func TestHostileR11HarborImageWithoutBash(t *testing.T) {
	bothRunnersRow(t, "hostile-r11/no-bash", map[string]string{
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nRUN rm -f /bin/bash /usr/bin/bash /bin/rbash /usr/bin/rbash\n",
		"solution/solve.sh":      "#!/bin/sh\necho solved > /tmp/solved\n",
		"tests/test.sh":          "#!/bin/sh\nmkdir -p /logs/verifier\nif [ -f /tmp/solved ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
	}, model.Failed, "bash", "Harbor's exec is `bash -c`: without bash no step runs, no reward is written",
		"Harbor task whose Dockerfile removes bash; solve.sh and test.sh are sh scripts")
}
