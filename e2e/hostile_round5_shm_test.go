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

// Round five, finding 4: a task that fills the container's own /dev/shm
// (the engine's fixed 64 MiB tmpfs, the same at every ratio and unrelated
// to the host's disk) and fails made its own failure count as the
// machine's disk full: infra-error · disk-full (D), not graded, outside
// the ratio's blame. A full per-container tmpfs is the task's own doing:
// the trial must be a plain failure whose reason names the filesystem and
// says it is the container's own fixed-size tmpfs.
func TestHostileR5ShmFull(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r5/shmfull"
	harborTask(t, tasks, "shmfull", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n", name),
		"solution/solve.sh": "#!/bin/bash\ndd if=/dev/zero of=/dev/shm/fill bs=1M count=80\nexit 1\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r5/shmfull") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	forged := 0
	if outcome != string(model.Failed) || cause != "" {
		forged++
		t.Errorf("exit %d: %s · %q: %s; want a plain failure (the task filled its own /dev/shm), not %s\n%s", run.code, outcome, orNone(cause), reason, model.CauseDiskFull, run.stderr)
	}
	for _, want := range []string{"/dev/shm (tmpfs)", "the container's own fixed-size tmpfs"} {
		if !strings.Contains(reason, want) {
			forged++
			t.Errorf("the reason %q does not say %q: it must name the full filesystem and whose it is", reason, want)
		}
	}
	letoutRow(t, "Harbor task, memory_mb = 256: solve.sh `dd if=/dev/zero of=/dev/shm/fill bs=1M count=80; exit 1`, reward 0",
		fmt.Sprintf("exit %d; %s · %s: %q (%s)", run.code, outcome, orNone(cause), shmClip(reason), time.Since(start).Round(time.Second)), 1-len(recs), leaked, forged)
}

// shmClip keeps a row's reason readable in a table.
func shmClip(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
