//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/runner/docker"
)

// Round eight (the fifth attacker's open item): a separate verifier's
// container, of the verifier's own resources, taken as given.
//
// Its peak: an agent of 64 MiB and a verifier of 512 MiB whose tests
// take about 300 MiB (perl's 150 MiB string, built and then copied into
// its variable). The verifier's peak was booked as the trial's
// kernel_peak_bytes (and the verifier step's peak) against the agent's
// 64 MiB limit: a trial "over its limit" that never was. Its memory is
// now its own row beside the trial's (the record's sidecars), the
// verifier step's peaks 0 with its container named.
//
// Its kill: the same tests (set -e) in a verifier of 128 MiB. The
// kernel killed perl in the verifier's container, and the reason said
// so, then "with no OOM kill by the kernel: killed by the task or from
// outside": the trial's watch had looked at the agent's container only.
// The verifier's step now says its own container's kill.
//
// Its size: memory_mb = 100000000 (95 TiB) in [verifier.environment]
// ran, admitted as the agent's 64 MiB. The plan is now refused before
// anything runs, as an agent of that size is.
func TestHostileR8SeparateVerifierIsNotTheTrial(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	toml := func(name string, verifierMiB int) string {
		return fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n"+
			"[verifier]\nenvironment_mode = \"separate\"\ntimeout_sec = 120.0\n[verifier.environment]\ncpus = 1\nmemory_mb = %d\nallow_internet = false\n"+
			"[environment]\ncpus = 1\nmemory_mb = 64\nallow_internet = false\n", name, verifierMiB)
	}
	tests := "FROM " + docker.DebianImage + "\nCOPY test.sh /tests/test.sh\nRUN chmod +x /tests/test.sh\n"
	const hold = 150 << 20
	peak, oom, huge := "hostile-r8/verifier-peak", "hostile-r8/verifier-oom", "hostile-r8/verifier-huge"
	harborTask(t, tasks, "peak", peak, map[string]string{
		"task.toml":        toml(peak, 512),
		"tests/Dockerfile": tests,
		"tests/test.sh":    fmt.Sprintf("#!/bin/bash\nperl -e '$x = \"a\" x %d; sleep 1'\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n", hold),
	})
	harborTask(t, tasks, "oom", oom, map[string]string{
		"task.toml":        toml(oom, 128),
		"tests/Dockerfile": tests,
		"tests/test.sh":    fmt.Sprintf("#!/bin/bash\nset -e\nperl -e '$x = \"a\" x %d; sleep 1'\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n", hold),
	})
	harborTask(t, tasks, "huge", huge, map[string]string{"task.toml": toml(huge, 100000000), "tests/Dockerfile": tests})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r8/verifier-") })

	out := filepath.Join(root, "out")
	runBin(t, bin, nil, oracleArgs(tasks, peak, out)...)
	_, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	lost, forged := 1-len(recs), 0
	said := fmt.Sprintf("%s %s %q", outcome, cause, reason)
	if len(recs) == 1 {
		r := recs[0]
		kp, _ := r["kernel_peak_bytes"].(float64)
		said += fmt.Sprintf(", kernel_peak_bytes %.0f MiB", kp/(1<<20))
		if outcome != "passed" {
			t.Errorf("%s: want passed (the verifier's 300 MiB fits its own 512 MiB)", said)
			forged++
		}
		if kp >= 64<<20 {
			t.Errorf("kernel_peak_bytes %.0f MiB: the verifier's container's peak booked as the trial's (agent limit 64 MiB)", kp/(1<<20))
			forged++
		}
		var vpeak float64
		sidecars, _ := r["sidecars"].([]any)
		for _, s := range sidecars {
			m, _ := s.(map[string]any)
			if name, _ := m["name"].(string); strings.HasPrefix(name, "verifier") {
				vpeak, _ = m["peak_bytes"].(float64)
			}
		}
		said += fmt.Sprintf(", the verifier's own row %.0f MiB", vpeak/(1<<20))
		if vpeak < hold {
			t.Errorf("the verifier's own row holds %.0f MiB, want its %d MiB beside the trial's", vpeak/(1<<20), hold>>20)
			forged++
		}
		steps, _ := r["steps"].([]any)
		for _, s := range steps {
			m, _ := s.(map[string]any)
			if m["phase"] != "verifier" {
				continue
			}
			if p, _ := m["peak_working_set_bytes"].(float64); p >= 64<<20 || m["container"] != "verifier" {
				t.Errorf("the verifier step: peak %.0f MiB, container %v; want 0 and \"verifier\" (its memory is its container's row)", p/(1<<20), m["container"])
				forged++
			}
		}
	}
	letoutRow(t, "a separate verifier of 512 MiB taking 300 MiB beside an agent of 64 MiB", said, lost, leaked, forged)

	out = filepath.Join(root, "out-oom")
	runBin(t, bin, nil, oracleArgs(tasks, oom, out)...)
	_, recs, leaked = records(t, out)
	outcome, cause, reason = oneRecord(recs)
	lost, forged = 1-len(recs), 0
	said = fmt.Sprintf("%s %s %q", outcome, cause, reason)
	if len(recs) == 1 && (outcome != "failed" || !strings.Contains(reason, "separate verifier's container was OOM-killed") || strings.Contains(reason, "no OOM kill")) {
		t.Errorf("%s: want failed, its reason the verifier's container OOM-killed at its own limit, and nothing saying no OOM kill", said)
		forged++
	}
	letoutRow(t, "a separate verifier of 128 MiB whose tests (set -e) take 300 MiB", said, lost, leaked, forged)

	out = filepath.Join(root, "out-huge")
	run := runBin(t, bin, nil, oracleArgs(tasks, huge, out)...)
	said = fmt.Sprintf("exit %d: %s", run.code, firstLineWith(run.stderr, "separate verifier"))
	forged = 0
	if run.code == 0 || !strings.Contains(run.stderr, "separate verifier") {
		t.Errorf("run exited %d, stderr %q: want it refused before running, naming the separate verifier's memory_mb", run.code, run.stderr)
		forged++
	}
	letoutRow(t, "a separate verifier of memory_mb = 100000000 (95 TiB)", said, 0, 0, forged)
}
