//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/headroom-eval/headroom/runner/docker"
)

// Round six, a planted reward: a separate verifier's task whose
// artifacts hold /logs (`artifacts = ["/logs"]`). Its agent solves
// nothing and writes 1 to /logs/verifier/reward.txt; its tests crash
// (exit 2) before writing a reward. The artifacts were copied into the
// verifier's container over its "empty" /logs/verifier and the agent's
// reward was read as the verifier's: PASSED. The reward files are now
// cleared in the verifier's container after the copy, as before a
// shared verifier: no reward, failed.
func TestHostileR6SeparatePlantedReward(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r6/planted"
	harborTask(t, tasks, "planted", name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.3\"\nartifacts = [\"/logs\"]\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n"+
			"[verifier]\nenvironment_mode = \"separate\"\ntimeout_sec = 60.0\n[verifier.environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n"+
			"[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name),
		"tests/Dockerfile":  "FROM " + docker.DebianImage + "\nCOPY test.sh /tests/test.sh\nRUN chmod +x /tests/test.sh\n",
		"tests/test.sh":     "#!/bin/bash\nls -la /logs/verifier\nexit 2\n",
		"solution/solve.sh": "#!/bin/bash\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	lost, forged := 1-len(recs), 0
	said := fmt.Sprintf("%s %s %q", outcome, cause, reason)
	if len(recs) == 1 && (outcome != "failed" || recs[0]["reward"] != nil) {
		t.Errorf("%s (reward %v): want failed, no reward (the verifier wrote none; the agent's is not its)", said, recs[0]["reward"])
		forged++
	}
	letoutRow(t, "a separate verifier's task (`artifacts = [\"/logs\"]`) whose agent writes 1 to /logs/verifier/reward.txt and whose test.sh exits 2 writing none", said, lost, leaked, forged)
}
