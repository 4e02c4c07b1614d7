package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Owner names this process for container labels: "host:pid:start", where
// start is the process's start time in clock ticks since boot (field 22
// of /proc/<pid>/stat). The start time tells this process from a later one
// that reused its pid, whatever either is called.
func Owner() string {
	h, _ := os.Hostname()
	pid := os.Getpid()
	owner := h + ":" + strconv.Itoa(pid)
	if start, ok := processStart(pid); ok {
		owner += ":" + start
	}
	return owner
}

// OwnerAlive says whether the process named by an owner label still runs.
// Owners on other hosts are presumed alive: they cannot be checked from
// here. An owner without a start time (written by an older headroom) is
// alive while its pid is; with one, only while that pid's process started
// at that time.
func OwnerAlive(owner string) bool {
	parts := strings.Split(owner, ":")
	me, _ := os.Hostname()
	if len(parts) < 2 || parts[0] != me {
		return owner != ""
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	start, ok := processStart(pid)
	if start == exitedStart {
		return false
	}
	if len(parts) < 3 {
		return true
	}
	// Unreadable /proc (another pid namespace): the live pid is all we know.
	return !ok || start == parts[2]
}

// exitedStart stands for the start time of a process that has ended but
// not been waited for.
const exitedStart = "exited"

// processStart reads a process's start time from /proc/<pid>/stat.
func processStart(pid int) (string, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(data[i+1:]))
	// fields[0] is field 3 (state); the start time is field 22.
	if len(fields) < 20 {
		return "", false
	}
	// A zombie (its parent has not waited for it yet, as a test that
	// SIGKILLed a headroom may not have) or dying process has ended.
	if fields[0] == "Z" || fields[0] == "X" {
		return exitedStart, true
	}
	return fields[19], true
}

// Labels every container, pod, network and volume headroom makes carries,
// whatever the backend.
const (
	LabelHeadroom   = "headroom"
	LabelExperiment = "headroom.experiment"
	LabelTrial      = "headroom.trial"
	LabelTask       = "headroom.task"
	LabelKept       = "headroom.kept"
	// LabelOwner is "host:pid" of the headroom process that made the
	// container, so a later start can tell a crash's leftovers from a
	// concurrent run's live trials.
	LabelOwner = "headroom.owner"
)
