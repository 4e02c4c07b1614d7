package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Owner names this process for container labels:
// "host:pid:start:boot:pidns", where start is the process's start time in
// clock ticks since boot (field 22 of /proc/<pid>/stat), boot this boot's
// id (/proc/sys/kernel/random/boot_id) and pidns the inode of its pid
// namespace. The start time tells this process from a later one that
// reused its pid, whatever either is called; the boot and the namespace
// say which kernel's and which namespace's pid it is. A host name and a
// pid alone did not: a headroom in a container with the host's network
// (so its host name), or in a pid namespace of its own (`unshare
// --pid`), was pid 1 or a pid reused here, and another headroom's
// cleanup found it "gone" and removed its running trial's container (the
// thirteenth attacker's 1).
func Owner() string {
	return OwnerOf(os.Getpid())
}

// OwnerOf is the owner label of a process of this host, boot and pid
// namespace (Owner's form; without its start time where /proc has none).
func OwnerOf(pid int) string {
	h, _ := os.Hostname()
	owner := h + ":" + strconv.Itoa(pid)
	start, ok := processStart(pid)
	if !ok {
		return owner
	}
	return owner + ":" + start + ":" + bootID() + ":" + pidNamespace()
}

// bootID is this boot's id ("" where it cannot be read), read once: every
// liveness check of every container a reaper's scan lists asks.
var bootID = sync.OnceValue(func() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
})

// pidNamespace is the inode of this process's pid namespace ("" where
// it cannot be read), read once as bootID is.
var pidNamespace = sync.OnceValue(func() string {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
})

// OwnerAlive says whether the process named by an owner label still runs
// (OwnerCheck, without the evidence).
func OwnerAlive(owner string) bool { return OwnerCheck(owner).Alive }

// OwnerStatus is what a liveness check of an owner label found: the
// verdict, and the evidence for it in a sentence a log can keep (which
// pid, which start time, what the kernel answered), with when it was
// looked at. A sandbox is removed as a leftover only on a check that
// says its owner is gone, and the reaper logs that check: an owner that
// is gone stays gone (a pid reused later has another start time), so a
// check that found it gone proves it was gone at the removal too.
type OwnerStatus struct {
	Alive    bool
	Evidence string
	At       time.Time
}

// OwnerCheck checks the process an owner label (Owner's form) names.
// Only a complete label can be proven gone: one with no owner, no pid,
// no start time, boot or pid namespace (someone else's container carrying
// the headroom label, or one from an older headroom) is never found gone,
// whatever its state, since removing it could kill what someone is
// using. Owners on other hosts, other boots or in other pid namespaces
// are presumed alive: they cannot be checked from here. A complete
// label's owner is alive only while that pid's process started at that
// time.
func OwnerCheck(owner string) OwnerStatus {
	st := OwnerStatus{At: time.Now()}
	verdict := func(alive bool, format string, a ...any) OwnerStatus {
		st.Alive, st.Evidence = alive, fmt.Sprintf(format, a...)
		return st
	}
	parts := strings.Split(owner, ":")
	me, _ := os.Hostname()
	if owner == "" {
		return verdict(true, "no owner label: not proven headroom's, so never proven gone (left alone)")
	}
	if len(parts) < 2 || parts[0] != me {
		return verdict(true, "owner on host %q, not this host %q: presumed alive (it cannot be checked from here)", parts[0], me)
	}
	if !completeOwner(owner) {
		return verdict(true, "owner label %q is not %s: never proven gone (left alone; an older headroom's label names no boot or pid namespace)", owner, ownerForm)
	}
	pid, _ := strconv.Atoi(parts[1])
	if boot := bootID(); strings.ReplaceAll(parts[3], "-", "") != strings.ReplaceAll(boot, "-", "") {
		return verdict(true, "owner on boot %s, not this boot %s (another machine of the same name, or before a restart): presumed alive (it cannot be checked from here)", parts[3], boot)
	}
	if ns := pidNamespace(); parts[4] != ns {
		return verdict(true, "owner in pid namespace %s, not this process's %s: its pid %d is not this namespace's, presumed alive (it cannot be checked from here)", parts[4], ns, pid)
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return verdict(false, "pid %d: kill(%d, 0) answered %v", pid, pid, err)
	}
	start, ok := processStart(pid)
	switch {
	case start == exitedStart:
		return verdict(false, "pid %d has exited (/proc/%d/stat: a zombie its parent has not waited for)", pid, pid)
	case !ok:
		// Unreadable /proc: the live pid is all we know.
		return verdict(true, "pid %d is running; /proc/%d/stat unreadable, so its start time cannot be compared: presumed alive", pid, pid)
	case start != parts[2]:
		return verdict(false, "pid %d is running but started at %s ticks after boot, not %s as labelled: another process reusing the pid", pid, start, parts[2])
	}
	return verdict(true, "pid %d is running and started at %s ticks after boot, as labelled", pid, start)
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
	// LabelBuild is, on a build's own network (no trial's: it is made
	// before any trial, for an image), the image it builds.
	LabelBuild = "headroom.build"
	// LabelExperimentsRoot is the absolute path of the experiments root
	// (--out) a run writes to, on everything it makes: a build's own
	// network (made before the run's experiment, its directory and id,
	// exist) and every container, network and volume of its trials. It
	// scopes them to `clean --out` and a run's start-up reap of that root:
	// a copy of an experiment's directory under another root (to share
	// it, a backup) does not make its kept containers that root's.
	LabelExperimentsRoot = "headroom.experiments-root"
	// LabelStepUser is, on a trial container whose step driver runs as
	// root, the user its steps run as (the task's or the image's USER):
	// the console's shell opens as that user too. Always set ("" for the
	// container's own), so an image's LABEL of that name counts for
	// nothing.
	LabelStepUser = "headroom.step-user"
)

type experimentsRootKey struct{}

// WithExperimentsRoot says, to what builds images under ctx, the
// experiments root of the run they are for (LabelExperimentsRoot).
func WithExperimentsRoot(ctx context.Context, root string) context.Context {
	if abs := AbsRoot(root); abs != "" {
		return context.WithValue(ctx, experimentsRootKey{}, abs)
	}
	return ctx
}

// AbsRoot is root as the experiments-root label writes it: absolute,
// its symbolic links resolved where it exists ("" for none).
func AbsRoot(root string) string {
	if root == "" {
		return ""
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// ExperimentsRootOf is the absolute experiments root WithExperimentsRoot
// gave ctx ("" for a build no run asked for: `headroom images`).
func ExperimentsRootOf(ctx context.Context) string {
	root, _ := ctx.Value(experimentsRootKey{}).(string)
	return root
}

// NotProvenOwn says why o is not proven to be a resource headroom made
// (empty: it is): headroom sets its experiment and trial labels and a
// complete owner label (host:pid:start:boot:pidns) on every container, pod, network
// and volume a trial has. The headroom label alone anyone can set (as
// headroom.kept): such a resource is someone else's and `headroom clean`
// removes it under no flag.
func NotProvenOwn(o OwnedResource) string {
	var missing []string
	if o.Build != "" && o.Kind == "network" {
		// A build's own network: made for an image, before any trial,
		// with its build and owner labels.
		if completeOwner(o.Owner) {
			return ""
		}
		return "no " + LabelOwner + " as " + ownerForm + ": not proven headroom's (headroom labels a build's network with its build and owner)"
	}
	if o.Experiment == "" {
		missing = append(missing, LabelExperiment)
	}
	if o.Trial == "" {
		missing = append(missing, LabelTrial)
	}
	if !completeOwner(o.Owner) {
		missing = append(missing, LabelOwner+" as "+ownerForm)
	}
	if len(missing) == 0 {
		return ""
	}
	return "no " + strings.Join(missing, ", no ") + ": not proven headroom's (headroom labels everything it makes with all three)"
}

// ownerForm is what a complete owner label holds (Owner).
const ownerForm = "host:pid:start:boot:pidns"

// completeOwner says whether owner is a whole "host:pid:start:boot:pidns"
// (an older headroom's host:pid:start is not).
func completeOwner(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) != 5 || parts[0] == "" || parts[3] == "" {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	if _, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
		return false
	}
	_, err = strconv.ParseUint(parts[4], 10, 64)
	return err == nil
}
