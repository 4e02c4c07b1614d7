package cli_test

import (
	"strings"
	"testing"
)

// The audit lists nothing of a task whose file is faithful (exit 0: its
// trials are graded as its harness grades them), and what the hardened
// profile changes, or what a file asks that headroom cannot do; below,
// which tasks need BuildKit.
func TestTasksAudit(t *testing.T) {
	const chroot = "../runner/docker/testdata/tb/parity-chroot"
	r := headroom(t, "tasks", "audit", chroot)
	if r.code != 0 || strings.Contains(r.stdout, "graded") ||
		!strings.Contains(r.stdout, "1 task loaded: 1 faithful, 0 with deviations; 0 not loaded") || strings.Contains(r.stdout, "BuildKit") {
		t.Errorf("faithful file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = headroom(t, "tasks", "audit", "../runner/docker/testdata/tb/heredoc-build")
	if !strings.Contains(r.stdout, "needs BuildKit") || !strings.Contains(r.stdout, "test/heredoc-build  image: Dockerfile:3: heredoc in RUN") {
		t.Errorf("heredoc: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A Dockerfile the classic builder builds otherwise is listed too.
	differs := t.TempDir()
	writeTree(t, differs, harborFiles("test/workdir-user", "[environment]\nallow_internet = false\n", map[string]string{
		"environment/Dockerfile": "FROM x\nUSER nobody\nWORKDIR /work\n",
	}))
	r = headroom(t, "tasks", "audit", differs)
	if !strings.Contains(r.stdout, "builds otherwise with the classic builder") || !strings.Contains(r.stdout, "test/workdir-user  image: Dockerfile:3: WORKDIR /work under USER nobody") {
		t.Errorf("WORKDIR under USER: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = headroom(t, "tasks", "audit", "--profile", "hardened", chroot)
	for _, want := range []string{"test/parity-chroot  hardened", "hardened profile: capabilities dropped", "SYS_CHROOT", "MKNOD", "hardened profile: pids limited", "1 with deviations"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("hardened: exit %d, want 1 and %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = headroom(t, "tasks", "audit", "../taskfile/testdata/harbor/g1-100-metres", "testdata/allbroken")
	for _, want := range []string{"separate verifier: gpus passed through", "continuous verification not run", "refused", "broken.toml:3"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("g1 and a broken file: exit %d, want 1 and %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = headroom(t, "tasks", "show", "--tasks-dir", "../taskfile/testdata/harbor", "g1-100-metres")
	if !strings.Contains(r.stdout, "storage  60GiB, not bounded, as under Harbor's Docker environment (run --apply-storage") {
		t.Errorf("show g1: exit %d, want its storage and whether it is bounded in\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = headroom(t, "tasks", "audit", "--profile", "loose", chroot); r.code != 2 || !strings.Contains(r.stderr, `unknown container profile "loose"`) {
		t.Errorf("bad profile: exit %d\n%s", r.code, r.stderr)
	}
	r = headroom(t, "tasks", "show", "--tasks-dir", chroot, "parity-chroot")
	if r.code != 0 || !strings.Contains(r.stdout, "profile  harbor (as its own harness runs it)") || !strings.Contains(r.stdout, "pids none") {
		t.Errorf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A multi-step task: tasks show lists its steps with their time limits,
// setup, healthcheck, gates and verifiers; the audit lists what headroom
// does not do of Harbor's multi-step trial.
func TestMultiStepShowAndAudit(t *testing.T) {
	const dir = "../taskfile/testdata/tbdirs/harbor-multi-step"
	r := headroom(t, "tasks", "show", "--tasks-dir", dir, "fixture/multi-step")
	for _, want := range []string{
		"steps    2, in one container; the trial's reward is the final of the steps' rewards",
		"1 one  agent 30s, verifier 10m0s; later steps only if reward >= 1",
		"2 two  agent 2m0s, verifier 45s; later steps only if reward >= 0.5, style >= 1",
		"setup     copy steps/two/workdir/ into the working directory",
		"setup     bash setup.sh",
		"ready     when test -f /app/ready exits 0 (every 1s, 2 tries)",
		"asks      Append to /app/out.txt.",
		"one/solve",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("show: exit %d, want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "timeouts agent") {
		t.Errorf("show gives task-wide timeouts for a multi-step task:\n%s", r.stdout)
	}
	r = headroom(t, "tasks", "audit", dir)
	for _, want := range []string{"artifacts not collected", "1 with deviations"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("audit: exit %d, want 1 and %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
}
