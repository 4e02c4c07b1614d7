package runner

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// label is an owner label of this host, boot and pid namespace.
func label(pid, start string) string {
	host, _ := os.Hostname()
	return host + ":" + pid + ":" + start + ":" + bootID() + ":" + pidNamespace()
}

func TestOwnerAlive(t *testing.T) {
	me := Owner()
	if !OwnerAlive(me) {
		t.Fatalf("this process's own owner %q is not alive", me)
	}
	if strings.Count(me, ":") != 4 || bootID() == "" || pidNamespace() == "" {
		t.Fatalf("Owner() = %q: want host:pid:start:boot:pidns", me)
	}
	host, _ := os.Hostname()
	pid := strconv.Itoa(os.Getpid())
	start, _ := processStart(os.Getpid())
	// A process that ended: its pid is free (or reused by another).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := label(strconv.Itoa(cmd.Process.Pid), "1")
	// This pid with another start time: the pid was reused, the owner is gone,
	// whatever the new process is called (the old check kept any "*.test").
	reused := label(pid, "1")
	for _, c := range []struct {
		owner string
		alive bool
	}{
		{me, true},
		{host + ":" + pid, true}, // an older label without a start time
		// Incomplete labels are never proven gone (someone else's
		// container carrying headroom's label, an older headroom's).
		{host + ":" + strconv.Itoa(cmd.Process.Pid), true},
		{host + ":" + strconv.Itoa(cmd.Process.Pid) + ":1", true},
		{reused, false},
		{gone, false},
		// The same pid and start in another pid namespace (a headroom
		// in a container with the host's network, or under `unshare
		// --pid`), or another boot: not this kernel's or namespace's
		// pid, so never proven gone (the thirteenth attacker's 1).
		{host + ":1:" + start + ":" + bootID() + ":4026599999", true},
		{host + ":" + strconv.Itoa(cmd.Process.Pid) + ":1:" + bootID() + ":4026599999", true},
		{host + ":" + strconv.Itoa(cmd.Process.Pid) + ":1:00000000-0000-0000-0000-000000000000:" + pidNamespace(), true},
		{"elsewhere:1:1:b:1", true}, // another host cannot be checked
		{"", true},
		{host + ":notapid", true},
	} {
		if got := OwnerAlive(c.owner); got != c.alive {
			t.Errorf("OwnerAlive(%q) = %v, want %v", c.owner, got, c.alive)
		}
	}
}

// A headroom killed by its parent but not yet waited for is a zombie: its
// pid still answers kill(0), but it owns nothing any more.
func TestOwnerAliveZombie(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start, ok := processStart(cmd.Process.Pid)
	if !ok {
		t.Fatal("cannot read the child's start time")
	}
	owner := OwnerOf(cmd.Process.Pid)
	if !OwnerAlive(owner) || !strings.Contains(owner, ":"+start+":") {
		t.Fatalf("running child %q not alive", owner)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Wait on the kernel's own state, not a sleep: the child turns Z.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s, _ := processStart(cmd.Process.Pid); s == exitedStart {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed child never became a zombie")
		}
		runtime.Gosched()
	}
	if OwnerAlive(owner) {
		t.Errorf("OwnerAlive(%q) of a zombie = true", owner)
	}
	_ = cmd.Wait()
}

// Each liveness check says why, with the pid, the start times and the
// kernel's answer: the reaper logs it beside every removal.
func TestOwnerCheckEvidence(t *testing.T) {
	host, _ := os.Hostname()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	start, _ := processStart(os.Getpid())
	for owner, want := range map[string]string{
		Owner():                               "pid " + strconv.Itoa(os.Getpid()) + " is running and started at " + start + " ticks after boot, as labelled",
		label(strconv.Itoa(os.Getpid()), "1"): "started at " + start + " ticks after boot, not 1 as labelled: another process reusing the pid",
		label(strconv.Itoa(dead), "1"):        "pid " + strconv.Itoa(dead) + ": kill(" + strconv.Itoa(dead) + ", 0) answered no such process",
		"elsewhere:1:1:b:1":                   `owner on host "elsewhere", not this host`,
		"":                                    "no owner label: not proven headroom's",
		host + ":" + strconv.Itoa(dead):       "is not host:pid:start:boot:pidns: never proven gone",
		host + ":" + strconv.Itoa(dead) + ":1:" + bootID() + ":4026599": "owner in pid namespace 4026599, not this process's",
	} {
		st := OwnerCheck(owner)
		if !strings.Contains(st.Evidence, want) || st.At.IsZero() || st.Alive != OwnerAlive(owner) {
			t.Errorf("OwnerCheck(%q) = %+v; want evidence with %q", owner, st, want)
		}
	}
}
