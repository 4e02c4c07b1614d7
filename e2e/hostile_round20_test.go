//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// Round twenty, the twenty-third attacker's 2 (medium): a healthcheck the
// kernel OOM-kills at the ratio's limit was "healthcheck failed 2 time(s)
// in a row (exit 137)", an infra error with no kill, no cause, not counted
// at the limit, while the same task passed at 3x. Under the ratio's limit
// the task could not come up: an OOM kill at its own limit.
func TestHostileR20HealthcheckKilledAtTheLimit(t *testing.T) {
	name := "hostile-r20/healthcheck-oom"
	driverRow(t, name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n"+
			"[environment]\ncpus = 1\nmemory_mb = 64\nallow_internet = false\n"+
			"[environment.healthcheck]\ncommand = \"set -o pipefail; head -c 100M /dev/zero | tail -c 90M | wc -c\"\ninterval_sec = 0.5\nretries = 2\n", name),
	}, model.OOMKilled, "during the task's [environment.healthcheck]", "the healthcheck killed at the ratio's limit is the limit's doing: oom-killed, own limit",
		"Harbor task, memory_mb = 64: its [environment.healthcheck] holds 90 MiB (`head -c 100M /dev/zero | tail -c 90M`, pipefail), at 1x")
}

// The twenty-third attacker's 4 (medium): a task whose compose service is
// built could not be resumed — preparing it set the service's image to
// the built tag in the tasks as loaded, the manifest's fingerprint took
// that in, and every resume was refused, "environment changed (… services…)"
// (1 of 1). Nothing changed: the resume runs the rest.
func TestHostileR20ResumeOfABuiltService(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	name := "hostile-r20/built-service"
	tasks := filepath.Join(t.TempDir(), "tasks")
	harborTask(t, tasks, "built-service", name, map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    build:\n      context: .\n  side:\n    build:\n      context: ./side\n    command: [\"sleep\", \"1000\"]\n    mem_limit: 32m\n",
		"environment/side/Dockerfile":     "FROM " + docker.DebianImage + "\nLABEL headroom.test.row=\"hostile-r20/built-service-side\"\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "1x", "--repeats", "2", "--concurrency", "1", "--out", out)
	dir, recs, _ := records(t, out)
	if run.code != 0 || len(recs) != 2 {
		t.Fatalf("run: exit %d, %d records\n%s", run.code, len(recs), run.stderr)
	}
	// The second record goes, as if the run had been stopped before it.
	enginetest.KeepRecords(t, dir, 1)
	res := runBin(t, bin, nil, "run", "--resume", filepath.Base(dir), "--out", out)
	_, recs, leaked := records(t, out)
	forged := 0
	if res.code != 0 || strings.Contains(res.stderr, "changed") {
		forged++
		t.Errorf("resume: exit %d\n%s", res.code, res.stderr)
	}
	said := strings.TrimSpace(res.stderr)
	if i := strings.Index(said, "\n"); i > 0 {
		said = said[:i]
	}
	letoutRow(t, "Harbor task with a compose service built from environment/side, 2 trials; the second's record removed, then `run --resume`",
		fmt.Sprintf("resume exit %d, %d records (%q; %s)", res.code, len(recs), said, time.Since(start).Round(time.Second)), 2-len(recs), leaked, forged)
}

// The twenty-fourth attacker's 1 and 1b (medium): a trial re-reading its
// own page cache at its 64 MiB limit (no kill, no step time at the limit
// counted) stalls, and the host's memory pressure counts its stalls: it
// was recorded contended by the host (4 of 4), and so was a sleeping
// trial beside it (3 of 3), its own failure listed among those the host
// may explain. Neither is the host's.
func TestHostileR20ThrashAtItsLimitIsNotTheHosts(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	tasks := filepath.Join(t.TempDir(), "tasks")
	thrash, quiet := "hostile-r20/thrash", "hostile-r20/quiet"
	toml := func(name string, mb int) string {
		return fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = %d\nallow_internet = false\n", name, mb)
	}
	harborTask(t, tasks, "thrash", thrash, map[string]string{
		"task.toml":              toml(thrash, 64),
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nWORKDIR /app\nRUN head -c 200M /dev/urandom > /data.bin\n",
		"solution/solve.sh":      "#!/bin/bash\nend=$((SECONDS+12))\nwhile [ $SECONDS -lt $end ]; do cat /data.bin > /dev/null; done\n",
		"tests/test.sh":          "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n",
	})
	harborTask(t, tasks, "quiet", quiet, map[string]string{
		"task.toml":         toml(quiet, 256),
		"solution/solve.sh": "#!/bin/bash\nsleep 3\nsleep 12\n",
		"tests/test.sh":     "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, thrash); removeTaskImages(t, quiet) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", thrash+","+quiet, "--agents", "oracle", "--ratios", "1x", "--repeats", "1", "--concurrency", "2", "--out", out)
	_, recs, leaked := records(t, out)
	if len(recs) != 2 {
		t.Fatalf("exit %d: %d records\n%s", run.code, len(recs), run.stderr)
	}
	forged := 0
	var said []string
	for _, r := range recs {
		noise, _ := r["noise"].(map[string]any)
		contended, _ := noise["contended"].(bool)
		if contended {
			forged++
			t.Errorf("%s: contended (%v): the memory pressure was a trial's at its own limit", r["task"], noise["why"])
		}
		said = append(said, fmt.Sprintf("%s: %s, contended %t, own %v", r["task"], r["outcome"], contended, noise["own"]))
	}
	letoutRow(t, "two Harbor tasks at concurrency 2: one re-reads a 200 MiB file at its 64 MiB limit for 12 s (never killed), the other sleeps 15 s; both fail their tests",
		fmt.Sprintf("%s (%s)", strings.Join(said, "; "), time.Since(start).Round(time.Second)), 2-len(recs), leaked, forged)
}
