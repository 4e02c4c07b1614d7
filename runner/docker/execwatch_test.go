package docker

import (
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
)

// An exec in a trial's container is someone else's unless headroom made
// it (its id) or it is the engine's run of the container's HEALTHCHECK;
// someone else's makes the trial's Final.KilledBy name the command, a
// sidecar's names the sidecar, and one after headroom's own stop is
// headroom's (the removal's).
func TestForeignExecIsWitnessed(t *testing.T) {
	exec := func(b *Backend, id, execID, cmd string, at time.Time) {
		b.dispatch(events.Message{Action: events.Action("exec_start: " + cmd), TimeNano: at.UnixNano(),
			Actor: events.Actor{ID: id, Attributes: map[string]string{"execID": execID}}})
	}
	newTrial := func() (*Backend, *sandbox) {
		sb := &sandbox{id: "trial", stops: stopWitness{destroyed: make(chan struct{})}}
		b := &Backend{sandboxes: map[string]*sandbox{"trial": sb}, parts: map[string]trialPart{},
			healthCmds: map[string]string{"trial": "/bin/sh -c curl -f localhost", "side": "pg_isready"}}
		sb.b = b
		b.parts["side"] = trialPart{trial: "trial", what: "its sidecar `db`", of: &sb.stops}
		return b, sb
	}
	now := time.Now()

	b, sb := newTrial()
	sb.stops.ownExec("e1")
	exec(b, "trial", "e1", "bash -c /solution/solve.sh", now)   // headroom's own (exec-steps mode)
	exec(b, "trial", "e2", "/bin/sh -c curl -f localhost", now) // the engine's healthcheck
	exec(b, "side", "e3", "pg_isready", now)                    // a sidecar's healthcheck
	if got := sb.stops.outside(); got != "" {
		t.Fatalf("headroom's own exec and the engine's healthchecks were taken for someone else's: %q", got)
	}
	exec(b, "trial", "e4", "sh -c kill -9 42", now)
	if got, want := sb.stops.outside(), "docker exec by someone other than headroom in its container: `sh -c kill -9 42`"; got != want {
		t.Fatalf("foreign exec: witness %q, want %q", got, want)
	}

	// The console's own shell (its s key) is said as such: the user's
	// commands ran in the trial, not someone else's.
	b, sb = newTrial()
	exec(b, "trial", "e7", "sh -c exec sh "+ConsoleShell, now)
	if got := sb.stops.outside(); !strings.HasPrefix(got, "docker exec of a shell the console opened (its s key) in its container") {
		t.Fatalf("the console's shell: witness %q, want it said as the console's", got)
	}

	b, sb = newTrial()
	exec(b, "side", "e5", "sh", now)
	if got, want := sb.stops.outside(), "docker exec by someone other than headroom in its sidecar `db`: `sh`"; got != want {
		t.Fatalf("foreign exec in a sidecar: witness %q, want %q", got, want)
	}

	b, sb = newTrial()
	sb.stops.ours()
	exec(b, "trial", "e6", "sh -c rm -rf /", time.Now().Add(time.Second))
	if got := sb.stops.outside(); got != "" {
		t.Fatalf("an exec after headroom's own stop taken for someone else's: %q", got)
	}

	// The healthcheck command read for a container goes with it: the memo
	// does not grow with every trial a long run makes.
	b, _ = newTrial()
	b.dispatch(events.Message{Action: events.ActionDestroy, TimeNano: now.UnixNano(), Actor: events.Actor{ID: "side"}})
	if _, kept := b.healthCmds["side"]; kept {
		t.Errorf("a destroyed container's healthcheck command is still kept: %v", b.healthCmds)
	}
}

func TestHealthExecCommand(t *testing.T) {
	for _, c := range []struct {
		test []string
		want string
	}{
		{[]string{"CMD-SHELL", "curl -f localhost"}, "/bin/sh -c curl -f localhost"},
		{[]string{"CMD", "pg_isready", "-q"}, "pg_isready -q"},
		{[]string{"NONE"}, ""},
		{nil, ""},
	} {
		if got := healthExecCommand(c.test); got != c.want {
			t.Errorf("healthExecCommand(%q) = %q, want %q", c.test, got, c.want)
		}
	}
}

// The network helper OOM-killed under a trial (its delay line held the
// task's flood until the kernel killed it, the twenty-third attacker's
// 1) is the trial's witness: headroom's container, not the task's doing.
// A sidecar's own OOM kill is the task's and witnesses nothing.
func TestHelperOOMKillIsWitnessed(t *testing.T) {
	sb := &sandbox{id: "trial", stops: stopWitness{destroyed: make(chan struct{})}}
	b := &Backend{sandboxes: map[string]*sandbox{"trial": sb}, parts: map[string]trialPart{}, healthCmds: map[string]string{}}
	sb.b = b
	b.watchPart(sb, "side", "its sidecar `db`", false)
	b.watchPart(sb, "helper", "its network helper (the container shaping its network)", true)
	oom := func(id string) {
		b.dispatch(events.Message{Action: events.ActionOOM, TimeNano: time.Now().UnixNano(), Actor: events.Actor{ID: id}})
	}
	oom("side")
	if got := sb.stops.outside(); got != "" {
		t.Fatalf("a sidecar's own OOM kill witnessed: %q", got)
	}
	oom("helper")
	if got, want := sb.stops.outside(), "an OOM kill of its network helper (the container shaping its network)"; got != want {
		t.Fatalf("the helper's OOM kill: witness %q, want %q", got, want)
	}
}
