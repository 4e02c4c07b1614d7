package docker

import (
	"testing"
	"time"
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
