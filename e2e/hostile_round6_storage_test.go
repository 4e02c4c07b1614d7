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

// Round six, finding 4: a Harbor task with storage_mb = 50 whose solve
// writes 200 MB to its container's file system. Nothing bounded it and
// nothing said so: not `tasks audit` (faithful), not the record. Harbor's
// Docker environment does not bound storage_mb either (its compose file
// sets cpus and memory only), so by default headroom does not kill it
// either (run --apply-storage bounds it where the engine can); but `tasks
// show` must say storage_mb is not bounded, and the record must keep what
// the trial wrote and say it was more than storage_mb.
func TestHostileR6StorageUnbounded(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r6/storage"
	harborTask(t, tasks, "storage", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\nstorage_mb = 50\nallow_internet = false\n", name),
		"solution/solve.sh": "#!/bin/bash\ndd if=/dev/zero of=/var/tmp/fill bs=1M count=200 status=none\nls -l /var/tmp/fill\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\nif [ \"$(stat -c %s /var/tmp/fill)\" = 209715200 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r6/storage") })
	forged := 0

	// What the task asks and that it is not bounded, said before a run.
	audit := runBin(t, bin, nil, "tasks", "show", "--tasks-dir", tasks, name)
	if audit.code != 0 || !strings.Contains(audit.stdout, "storage  50MiB, not bounded, as under Harbor's Docker environment") {
		forged++
		t.Errorf("tasks show: exit %d; want its storage_mb said not bounded in\n%s%s", audit.code, audit.stdout, audit.stderr)
	}

	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	var disk map[string]any
	if len(recs) == 1 {
		disk, _ = recs[0]["disk"].(map[string]any)
	}
	num := func(k string) int64 {
		f, _ := disk[k].(float64)
		return int64(f)
	}
	said := "no disk in the record"
	switch {
	case disk == nil:
		forged++
		t.Errorf("exit %d: %s · %q: %s; the record has no disk: it must keep what the trial wrote and its storage_mb\n%s", run.code, outcome, orNone(cause), reason, run.stderr)
	case num("bound_bytes") == 50*model.MiB:
		// The engine held the container to 50 MB: the write failed there.
		said = fmt.Sprintf("bounded at %s, wrote %s", model.FormatBytes(num("bound_bytes")), model.FormatBytes(num("written_bytes")))
		if outcome == string(model.Passed) || num("written_bytes") > 60*model.MiB {
			forged++
			t.Errorf("bounded at 50 MiB, yet %s with %s written", outcome, model.FormatBytes(num("written_bytes")))
		}
	default:
		said = fmt.Sprintf("wrote %s of spec %s, not bounded (%v)", model.FormatBytes(num("written_bytes")), model.FormatBytes(num("spec_bytes")), disk["unbounded"])
		// Not bounded, as Harbor's Docker environment does not bound it:
		// the trial passes, and the record says it wrote more.
		if outcome != string(model.Passed) {
			forged++
			t.Errorf("not bounded, yet %s · %q: %s: a trial Harbor would pass was not", outcome, orNone(cause), reason)
		}
		if num("spec_bytes") != 50*model.MiB || num("written_bytes") < 200*model.MiB || disk["unbounded"] == nil {
			forged++
			t.Errorf("disk %v: want spec 50 MiB, at least 200 MiB written, and why it was not bounded", disk)
		}
		if !strings.Contains(reason, "above its storage_mb of 50MiB, which was not enforced") {
			forged++
			t.Errorf("the reason %q does not say the trial wrote more than its storage_mb", reason)
		}
	}
	letoutRow(t, "Harbor task, storage_mb = 50: solve.sh `dd if=/dev/zero of=/var/tmp/fill bs=1M count=200`, reward 1 when the file is whole",
		fmt.Sprintf("show exit %d; run exit %d; %s · %s; %s (%s)", audit.code, run.code, outcome, orNone(cause), said, time.Since(start).Round(time.Second)), 1-len(recs), leaked, forged)
}
