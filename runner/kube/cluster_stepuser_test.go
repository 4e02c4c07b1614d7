package kube

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// clusterHarborOracle writes a Harbor task directory of files, builds its
// image locally (removed at the test's end) and puts it on the cluster,
// and returns the task with its oracle agent alone.
func clusterHarborOracle(t *testing.T, p *Platform, name string, files map[string]string) model.Task {
	t.Helper()
	dir := filepath.Join(t.TempDir(), strings.ReplaceAll(name, "/", "-"))
	for f, content := range files {
		path := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := taskfile.LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if task.Image, err = p.PrepareImage(ctx, task, false, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	ref := task.Image
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", ref).Run() })
	a, ok := task.Agent(taskfile.AgentOracle)
	if !ok {
		t.Fatal("no oracle agent")
	}
	task.Agents = []model.Agent{a}
	return task
}

// harborUserToml is a Harbor task.toml; verifierUser, when set, is its
// [verifier] user.
func harborUserToml(name, verifierUser string) string {
	v := ""
	if verifierUser != "" {
		v = "user = \"" + verifierUser + "\"\n"
	}
	return "schema_version = \"1.1\"\n[task]\nname = \"" + name + "\"\n[agent]\ntimeout_sec = 60.0\n[verifier]\n" + v + "timeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n"
}

// Round ten's left item on Kubernetes (e2e's
// TestHostileR10ImageUserVerifierRoot on a cluster): a Harbor task whose
// image says `USER nobody` and whose `[verifier] user = "root"` passes as
// under Harbor — the agent runs as nobody and is denied the root-only
// key, the verifier as root reads it. Before: the verifier's step went to
// a probe that ran as nobody (the pod's exec runs as the container's
// user), ended 126, and the trial failed ("the verifier wrote no
// reward"). An image whose USER its /etc/passwd lacks ends the start in
// the runtime's words, as the engine's (a guard of the change: the pod
// no longer runs as that USER, so the runtime no longer looks it up).
func TestClusterImageUserVerifierRoot(t *testing.T) {
	p, _ := clusterPlatform(t)
	user := clusterHarborOracle(t, p, "test/kube-image-user", map[string]string{
		"task.toml":              harborUserToml("test/kube-image-user", "root"),
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nRUN echo 42 > /root/answer-key && chmod 700 /root && mkdir -m 777 /work\nUSER nobody\nWORKDIR /work\n",
		"solution/solve.sh":      "#!/bin/bash\nid -un > /work/agent-user\necho \"$HOME\" > /work/agent-home\ncat /root/answer-key > /work/answer 2>/dev/null || echo denied > /work/answer\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nid -un; cat /work/agent-user /work/agent-home /work/answer\nif grep -qx 42 /root/answer-key && grep -qx nobody /work/agent-user && grep -qx /nonexistent /work/agent-home && grep -qx denied /work/answer; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	ghost := clusterHarborOracle(t, p, "test/kube-unknown-user", map[string]string{
		"task.toml":              harborUserToml("test/kube-unknown-user", ""),
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nUSER ghost\n",
		"solution/solve.sh":      "#!/bin/bash\ntrue\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
	})
	// An image's own ENTRYPOINT stays PID 1, as the image's user.
	entry := clusterHarborOracle(t, p, "test/kube-entrypoint-user", map[string]string{
		"task.toml":              harborUserToml("test/kube-entrypoint-user", "root"),
		"environment/entry.sh":   "#!/bin/sh\nid -un > /tmp/pid1-user\nexec \"$@\"\n",
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nCOPY entry.sh /entry.sh\nRUN chmod 755 /entry.sh && mkdir -m 700 /secret\nUSER nobody\nENTRYPOINT [\"/entry.sh\"]\n",
		"solution/solve.sh":      "#!/bin/bash\nid -un > /tmp/agent-user\nls /secret 2>/dev/null || echo denied > /tmp/answer\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nid -un; cat /tmp/pid1-user /tmp/agent-user /tmp/answer; tr '\\0' ' ' </proc/1/cmdline; echo\nif ls /secret >/dev/null && grep -qx nobody /tmp/pid1-user && grep -qx nobody /tmp/agent-user && grep -qx denied /tmp/answer && [ \"$(stat -c %U /proc/1)\" = nobody ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	results := clusterSweepWith(t, p, runner.SandboxOptions{Exe: probeExe(t)}, enginetest.Sweep{Tasks: []model.Task{user, ghost, entry}, Ratios: []model.Ratio{{Uncapped: true}}})
	for _, r := range results {
		t.Logf("%s: %s · %s (%s), steps by %s", r.Task, r.Outcome, r.Cause, r.Reason, r.StepRunner)
		for _, s := range r.Steps {
			t.Logf("%s %s %s: exit %s %q", r.Task, s.Phase, s.Name, s.ExitText(), s.Output)
		}
		switch r.Task {
		case user.Name, entry.Name:
			if r.Outcome != model.Passed || r.StepRunner != runner.StepsByDriver {
				t.Errorf("%s: %s · %s (%s), steps by %q; want passed, by the probe", r.Task, r.Outcome, r.Cause, r.Reason, r.StepRunner)
			}
		case ghost.Name:
			if r.Outcome != model.InfraError || !strings.Contains(r.Reason, "unable to find user ghost") {
				t.Errorf("%s: %s · %s (%s); want infra-error, unable to find user ghost", r.Task, r.Outcome, r.Cause, r.Reason)
			}
		}
	}
	if len(results) != 3 {
		t.Errorf("%d trials, want 3", len(results))
	}
}
