//go:build hostile

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Round six, item 2: a task whose PID 1 (its image's ENTRYPOINT: a Harbor
// task's steps go by the engine's exec, the ENTRYPOINT kept) chroots into
// an empty directory hid every mount of its container from headroom's
// look (made through /proc/<PID 1>/root and its mountinfo), and a "No
// space left on device" line in its output was then taken at its word:
// infra-error · disk-full, the machine's fault and outside the
// comparison, with the host's disk far from full. The look must not
// depend on what the task's PID 1 shows: the trial is a plain failure
// whose reason gives the room headroom read, the writable layer's among it.
func TestHostileR6ChrootHidesMounts(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r6/chroot"
	harborTask(t, tasks, "chroot", name, map[string]string{
		"task.toml": harborToml(name, 256),
		// PID 1 ends in /empty, holding only a static idler (the
		// workload image's binary): no mount is below it.
		"environment/start.sh": "#!/bin/sh\nexec chroot /empty /hr-workload idle\n",
		// The idler is the static hr-workload built beside the binary
		// under test (else that binary, which is hr-workload when called
		// so): FROM headroom-workload:latest failed the row once a user
		// of the shared engine had removed that tag.
		"environment/hr-workload": idlerBinary(t, bin),
		"environment/Dockerfile": "FROM headroom-debian:bookworm\n" +
			"COPY hr-workload /empty/hr-workload\nCOPY start.sh /\nENTRYPOINT [\"/start.sh\"]\n",
		"solution/solve.sh": "#!/bin/bash\necho \"pid 1's root: $(readlink /proc/1/root)\"\necho 'cp: error writing /app/out: No space left on device'\nexit 1\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	row := runOracleRow(t, bin, tasks, name, "")
	forged := 0
	// The attack took place: PID 1 was in /empty when the solve ran.
	chrooted := false
	for _, r := range row.recs {
		for _, s := range steps(r) {
			if o, _ := s["output"].(string); strings.Contains(o, "pid 1's root: /empty") {
				chrooted = true
			}
		}
	}
	if !chrooted && len(row.recs) == 1 {
		t.Fatalf("no step said PID 1's root was /empty: the entrypoint did not chroot, so this row tests nothing (%s · %s: %s)", row.outcome, orNone(row.cause), row.reason)
	}
	if row.outcome != string(model.Failed) || row.cause != "" {
		forged++
		t.Errorf("exit %d: %s · %s: %q; want a plain failure (the task's words on a disk with room), not %s\n%s", row.run.code, row.outcome, orNone(row.cause), row.reason, model.CauseDiskFull, row.run.stderr)
	}
	for _, want := range []string{"No space left on device", "no filesystem of its container was full", "/ ("} {
		if !strings.Contains(row.reason, want) {
			forged++
			t.Errorf("the reason %q does not say %q: it must give the room read past the chroot, the writable layer's (/) among it", row.reason, want)
		}
	}
	letoutRow(t, "Harbor image ENTRYPOINT `exec chroot /empty /hr-workload idle` (PID 1 sees no mount); solve.sh prints `cp: error writing /app/out: No space left on device`, exit 1; reward 0",
		row.said(start), 1-len(row.recs), row.left, forged)
}

// idlerBinary is a static program that idles when called hr-workload:
// the hr-workload built beside bin, else bin itself.
func idlerBinary(t *testing.T, bin string) string {
	t.Helper()
	for _, p := range []string{filepath.Join(filepath.Dir(bin), "hr-workload"), bin} {
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
	}
	t.Fatalf("no hr-workload beside %s", bin)
	return ""
}
