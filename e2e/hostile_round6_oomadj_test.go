//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Round six, oomadj: a task that raises the OOM score of headroom's step
// driver (the container's PID 1, started at -1000 so the OOM killer never
// chooses it; container root may raise it) and then runs past its own
// limit made the kernel take the driver: infra-error · driver-killed,
// "headroom's failure, not the task's: not graded", and a resume ran it
// again, so an agent could erase its failures until a lucky pass. The
// kill is the task's doing: an ordinary kill at its own limit
// (oom-killed · own-limit, graded), whose reason says the task raised
// the driver's oom_score_adj.
func TestHostileR6DriverOOMScoreRaised(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r6/oomadj"
	harborTask(t, tasks, "oomadj", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 64\nallow_internet = false\n", name),
		"solution/solve.sh": "#!/bin/bash\necho 1000 > /proc/1/oom_score_adj\npython3 -c 'b = bytearray(200 << 20)'\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r6/oomadj") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	forged := 0
	if outcome != string(model.OOMKilled) || cause != string(model.CauseOwnLimit) {
		forged++
		t.Errorf("exit %d: %s · %s: %q; want %s · %s (the task raised the driver's OOM score and ran past its own limit: its own kill, graded), not %s\n%s",
			run.code, outcome, orNone(cause), reason, model.OOMKilled, model.CauseOwnLimit, model.CauseDriverKilled, run.stderr)
	}
	if !strings.Contains(reason, "oom_score_adj") || !strings.Contains(reason, "1000") {
		forged++
		t.Errorf("the reason %q does not say the task raised headroom's driver's oom_score_adj (to 1000)", reason)
	}
	letoutRow(t, "Harbor task, memory_mb = 64: solve.sh `echo 1000 > /proc/1/oom_score_adj; python3 -c 'b = bytearray(200 << 20)'`",
		fmt.Sprintf("exit %d; %s · %s: %q (%s)", run.code, outcome, orNone(cause), shmClip(reason), time.Since(start).Round(time.Second)), 1-len(recs), leaked, forged)
}
