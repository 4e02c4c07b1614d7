package docker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/docker/docker/api/types/container"
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

// removeDeadNamesake removes the container holding name when the headroom
// that made it is gone and it was not kept, and says whether it did.
// Another live run's container of that name is never touched.
func (b *Backend) removeDeadNamesake(ctx context.Context, name string) bool {
	info, err := b.cli.ContainerInspect(ctx, name)
	if err != nil || info.Config == nil {
		return false
	}
	labels := info.Config.Labels
	if labels[LabelHeadroom] == "" || labels[LabelKept] != "" || OwnerAlive(labels[LabelOwner]) {
		return false
	}
	err = b.cli.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true})
	return err == nil || IsGone(err)
}
