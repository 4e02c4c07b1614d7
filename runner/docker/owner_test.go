package docker

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

func TestOwnerAlive(t *testing.T) {
	me := Owner()
	if !OwnerAlive(me) {
		t.Fatalf("this process's own owner %q is not alive", me)
	}
	host, _ := os.Hostname()
	pid := strconv.Itoa(os.Getpid())
	// A process that ended: its pid is free (or reused by another).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := host + ":" + strconv.Itoa(cmd.Process.Pid) + ":1"
	// This pid with another start time: the pid was reused, the owner is gone,
	// whatever the new process is called (the old check kept any "*.test").
	reused := host + ":" + pid + ":1"
	for _, c := range []struct {
		owner string
		alive bool
	}{
		{me, true},
		{host + ":" + pid, true}, // an older label without a start time
		{reused, false},
		{gone, false},
		{"elsewhere:1:1", true}, // another host cannot be checked
		{"", false},
		{host + ":notapid", false},
	} {
		if got := OwnerAlive(c.owner); got != c.alive {
			t.Errorf("OwnerAlive(%q) = %v, want %v", c.owner, got, c.alive)
		}
	}
}
