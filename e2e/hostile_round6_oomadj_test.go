//go:build hostile

package e2e

import (
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
		"task.toml":         harborToml(name, 64),
		"solution/solve.sh": "#!/bin/bash\necho 1000 > /proc/1/oom_score_adj\npython3 -c 'b = bytearray(200 << 20)'\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r6/oomadj") })
	row := runOracleRow(t, bin, tasks, name, "")
	forged := 0
	if row.outcome != string(model.OOMKilled) || row.cause != string(model.CauseOwnLimit) {
		forged++
		t.Errorf("exit %d: %s · %s: %q; want %s · %s (the task raised the driver's OOM score and ran past its own limit: its own kill, graded), not %s\n%s",
			row.run.code, row.outcome, orNone(row.cause), row.reason, model.OOMKilled, model.CauseOwnLimit, model.CauseDriverKilled, row.run.stderr)
	}
	// Where the kernel took the driver, the reason says why. On an engine
	// that refuses the driver's -1000, its steps run at 1000 too (round
	// eleven), and the kernel takes the task's larger python instead.
	if strings.Contains(row.reason, "step driver") && (!strings.Contains(row.reason, "oom_score_adj") || !strings.Contains(row.reason, "1000")) {
		forged++
		t.Errorf("the reason %q does not say the task raised headroom's driver's oom_score_adj (to 1000)", row.reason)
	}
	letoutRow(t, "Harbor task, memory_mb = 64: solve.sh `echo 1000 > /proc/1/oom_score_adj; python3 -c 'b = bytearray(200 << 20)'`",
		row.said(start), 1-len(row.recs), row.left, forged)
}
