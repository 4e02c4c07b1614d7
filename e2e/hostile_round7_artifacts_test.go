//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner/docker"
)

// Round seven (a hint-free attacker after round six), finding 3: a
// separate verifier's task naming three artifact paths, each holding a
// 400 MB sparse file (nothing in the container's memory or disk). Each
// path had its own 1 GiB: the three were copied whole, 1.2 GB on the
// host's disk for one trial (the attacker's 2.7 GB, times the
// concurrency). The budget is the trial's, over all its paths: the third
// path passes it, the task's oversized artifacts, "artifacts over 1 GiB
// in all".
func TestHostileR7ArtifactsBudgetIsTheTrials(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r7/artbudget"
	harborTask(t, tasks, "artbudget", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\nartifacts = [\"/a1\", \"/a2\", \"/a3\"]\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n[verifier]\nenvironment_mode = \"separate\"\ntimeout_sec = 300.0\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name),
		"tests/Dockerfile":  "FROM " + docker.DebianImage + "\nCOPY test.sh /tests/test.sh\n",
		"solution/solve.sh": "#!/bin/bash\nfor d in /a1 /a2 /a3; do mkdir -p $d; truncate -s 400M $d/f; done\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	forged := 0
	if outcome != "failed" || cause != "" || !strings.HasPrefix(reason, "artifacts over 1 GiB in all") {
		forged++
		t.Errorf("exit %d; %s · %s: %s; want failed, artifacts over 1 GiB in all (three 400 MB paths, one trial)\n%s", run.code, outcome, orNone(cause), reason, run.stderr)
	}
	letoutRow(t, "a separate verifier's Harbor task, `artifacts = [\"/a1\", \"/a2\", \"/a3\"]`; solve.sh `truncate -s 400M` a file in each",
		fmt.Sprintf("exit %d; %s · %s: %q (%s)", run.code, outcome, orNone(cause), shmClip(reason), time.Since(start).Round(time.Second)), 1-len(recs), leaked, forged)
}
