package cli_test

import (
	"strings"
	"testing"
)

// The audit is empty for a faithful task (exit 0), and lists what the
// hardened profile changes, or what a file asks that headroom cannot do
// (exit 1).
func TestTasksAudit(t *testing.T) {
	const chroot = "../runner/docker/testdata/tb/parity-chroot"
	r := headroom(t, "tasks", "audit", chroot)
	if r.code != 0 || strings.Contains(r.stdout, "DEVIATION") || !strings.Contains(r.stdout, "1 task(s) loaded: 1 faithful, 0 with deviations; 0 not loaded") {
		t.Errorf("faithful: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = headroom(t, "tasks", "audit", "--profile", "hardened", chroot)
	for _, want := range []string{"test/parity-chroot  hardened", "hardened profile: capabilities dropped", "SYS_CHROOT", "MKNOD", "hardened profile: pids limited", "1 with deviations"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("hardened: exit %d, want 1 and %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = headroom(t, "tasks", "audit", "../taskfile/testdata/harbor/g1-100-metres", "testdata/allbroken")
	for _, want := range []string{"separate verifier environment not used", "continuous verification not run", "refused", "broken.toml:3"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("g1 and a broken file: exit %d, want 1 and %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if r = headroom(t, "tasks", "audit", "--profile", "loose", chroot); r.code != 2 || !strings.Contains(r.stderr, `unknown container profile "loose"`) {
		t.Errorf("bad profile: exit %d\n%s", r.code, r.stderr)
	}
	r = headroom(t, "tasks", "show", "--tasks-dir", chroot, "parity-chroot")
	if r.code != 0 || !strings.Contains(r.stdout, "profile  harbor (as its own harness runs it)") || !strings.Contains(r.stdout, "pids none") {
		t.Errorf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
