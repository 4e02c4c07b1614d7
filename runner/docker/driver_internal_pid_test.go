package docker

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner"
)

// While a command is in flight and its pid not said, the process watch
// waits (up to pidWait): a list read then names the step by its argv
// (`hr-workload run --step install --profile {…}` on a live card).
func TestProcessWatchWaitsForTheStepsPID(t *testing.T) {
	now := time.Now()
	d := &driver{}
	if d.pidPending(now) {
		t.Error("nothing in flight, yet pending")
	}
	d.cur = &driven{started: "\x1e[headroom-pid x]", at: now}
	if !d.pidPending(now.Add(10 * time.Millisecond)) {
		t.Error("a step just sent with no pid said: want pending")
	}
	if d.pidPending(now.Add(pidWait + time.Millisecond)) {
		t.Error("pending past pidWait: a driver that never says its pid would hide the processes")
	}
	d.stepPID = 42
	if d.pidPending(now.Add(10 * time.Millisecond)) {
		t.Error("the pid said, yet pending")
	}
	d.stepPID, d.cur = 0, &driven{at: now} // an op (a read): no process to name
	if d.pidPending(now) {
		t.Error("an op with no process, yet pending")
	}
}

// A process once known as the step's (by the pid the driver said) stays
// the step's to its end: read after the driver has moved on (its pid
// reset as the command ends), it is not renamed to its argv (a CI run's
// catalog sweep named built-in steps `hr-workload run --step build …`).
func TestStepRoleOutlivesTheCommand(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	d := &driver{cur: &driven{started: "x", at: time.Now()}, stepPID: pid}
	s := &sandbox{drv: d}
	s.pw.cmds, s.pw.roles = map[procID]procCmd{}, map[procID]string{}
	if p, _, _, ok := s.readProc(pid, time.Now()); !ok || p.Role != runner.RoleStep {
		t.Fatalf("with its pid said: %+v %v", p, ok)
	}
	d.cur, d.stepPID = nil, 0
	if p, _, _, ok := s.readProc(pid, time.Now()); !ok || p.Role != runner.RoleStep {
		t.Errorf("after the command ended: role %q, want it still the step's", p.Role)
	}
}

// A command in flight whose pid the driver has not said yet gives its
// line, so a process read then with that very line, the driver's child,
// is the step's; once the pid is said, or with nothing in flight, none.
func TestPendingArgvUntilThePidIsSaid(t *testing.T) {
	d := &driver{}
	if a := d.pendingArgv(); a != "" {
		t.Errorf("nothing in flight: %q", a)
	}
	d.cur = &driven{started: "\x1e[headroom-pid x]", at: time.Now(), argv: "/hr-workload run --step verify --profile {}"}
	if a := d.pendingArgv(); a != d.cur.argv {
		t.Errorf("in flight, no pid: %q, want %q", a, d.cur.argv)
	}
	d.stepPID = 42
	if a := d.pendingArgv(); a != "" {
		t.Errorf("the pid said: %q, want none (the pid names it)", a)
	}
}
