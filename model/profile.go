package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Container profiles: how a trial's container is set up apart from its
// resource limits.
const (
	// ProfileHarbor is what Harbor's Docker environment gives a task: the
	// engine's default capabilities, no pids limit unless the task sets
	// one, no no-new-privileges, open files raised to 1048576. The default
	// for task directories, so that the benchmark's own container is what
	// runs and only the resource limit differs.
	ProfileHarbor = "harbor"
	// ProfileHardened is headroom's lockdown: every capability dropped but
	// a few, a pids limit, no-new-privileges. The default for headroom's
	// own task files and the built-in tasks.
	ProfileHardened = "hardened"
)

// Profiles lists the container profiles, the default for task directories
// first.
var Profiles = []string{ProfileHarbor, ProfileHardened}

// HarborNoFile is the open-files limit (soft and hard) Harbor's compose
// file gives its main service.
const HarborNoFile = 1048576

// DockerDefaultCapabilities are the capabilities Docker's engine leaves a
// container that asks for none.
var DockerDefaultCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// HostCapabilities are the capabilities that reach past a trial's
// container, to the host or to other trials, in either profile: reading
// any host file by handle (DAC_READ_SEARCH), mounting the host's cgroup
// roots (SYS_ADMIN), tracing another process (SYS_PTRACE, which defeats
// the step driver's non-dumpable channel), loading kernel modules, raw
// I/O, the clock, the kernel log, the audit log, BPF and perf events,
// LSM policy, host resource limits, real-time scheduling over the other
// trials (SYS_NICE: SCHED_FIFO starves their CPU), the trial network's routes and
// filters. A task asking for one is refused unless the user allows it
// by name (--allow-capability). Docker's defaults are not among them.
var HostCapabilities = []string{"ALL", "AUDIT_CONTROL", "AUDIT_READ", "BLOCK_SUSPEND", "BPF", "CHECKPOINT_RESTORE", "DAC_READ_SEARCH",
	"LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE", "NET_ADMIN", "PERFMON", "SYS_ADMIN", "SYS_BOOT", "SYS_MODULE", "SYS_NICE", "SYS_PACCT",
	"SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "SYSLOG", "WAKE_ALARM"}

// CapabilityName is a capability as a task or user writes it, in the
// form headroom keeps: upper case, no CAP_ prefix ("cap_sys_ptrace" →
// "SYS_PTRACE").
func CapabilityName(c string) string {
	return strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(c)), "CAP_")
}

// HostReaching says whether capability c (in CapabilityName's form)
// reaches past the container.
func HostReaching(c string) bool { return slices.Contains(HostCapabilities, c) }

// HostCapabilityGrants are the host-reaching capabilities the task's
// containers get (its own and its sidecars'), each once, in order.
func (t *Task) HostCapabilityGrants() []string {
	var out []string
	add := func(cs []string) {
		for _, c := range cs {
			if HostReaching(c) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	add(t.Capabilities)
	for _, sc := range t.Sidecars {
		add(sc.Capabilities)
	}
	return out
}

// CapabilityRefusal is a task asking for capabilities that reach past
// its container that the user did not allow.
type CapabilityRefusal struct {
	Task string
	// Asks are where each refused capability is asked for
	// ("tasks/x.toml:9: SYS_ADMIN").
	Asks    []string
	Refused []string
}

func (e CapabilityRefusal) Error() string {
	flags := make([]string, len(e.Refused))
	for i, c := range e.Refused {
		flags[i] = "--allow-capability " + c
	}
	return fmt.Sprintf("%s: task %s asks for %s, which reach%s past its container (the host's files, kernel or other trials); headroom refuses it: run with %s only if you trust the task",
		strings.Join(e.Asks, "; "), e.Task, strings.Join(e.Refused, ", "), map[bool]string{true: "es", false: ""}[len(e.Refused) == 1], strings.Join(flags, " "))
}

// CheckCapabilities refuses the task if it is given a host-reaching
// capability that allowed does not name.
func (t *Task) CheckCapabilities(allowed []string) error {
	var refused, asks []string
	for _, c := range t.HostCapabilityGrants() {
		if slices.Contains(allowed, c) {
			continue
		}
		refused = append(refused, c)
		where := t.CapabilitiesAt[c]
		if where == "" {
			where = t.Source
		}
		asks = append(asks, where+": "+c)
	}
	if len(refused) == 0 {
		return nil
	}
	return CapabilityRefusal{Task: t.Name, Asks: asks, Refused: refused}
}

// ParseProfile checks a profile name given by a user.
func ParseProfile(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(Profiles, s) {
		return s, nil
	}
	return "", fmt.Errorf("unknown container profile %q: use %s", s, strings.Join(Profiles, " or "))
}

// Hardened says whether the task's container is locked down. A task
// recorded before profiles existed ran hardened.
func (t *Task) Hardened() bool { return t.Profile != ProfileHarbor }

// SetProfile puts the task under a container profile. The pids limit is
// the one part of the spec a profile decides: a task that sets none gets
// none under harbor and DefaultPidsLimit when hardened.
func (t *Task) SetProfile(profile string) {
	t.Profile = profile
	if t.Resources.PidsLimit > 0 && !slices.Contains(t.Resources.Defaulted, "pids_limit") {
		return
	}
	if t.Hardened() {
		t.Resources.PidsLimit = DefaultPidsLimit
	} else {
		t.Resources.PidsLimit = 0
	}
	if !slices.Contains(t.Resources.Defaulted, "pids_limit") {
		t.Resources.Defaulted = append(t.Resources.Defaulted, "pids_limit")
	}
}

// Deviation is one way a task as headroom runs it differs from how its
// benchmark's own harness would run it.
type Deviation struct {
	// What names the difference in a few words ("allowed_hosts not
	// enforced"); Detail says what headroom does instead.
	What   string `json:"what"`
	Detail string `json:"detail,omitempty"`
}

func (d Deviation) String() string {
	if d.Detail == "" {
		return d.What
	}
	return d.What + ": " + d.Detail
}

// ForeignHarness says whether the task comes from another benchmark's
// format, whose harness is the reference for how it should run.
func (t *Task) ForeignHarness() bool {
	return t.Format == FormatHarbor || t.Format == FormatTerminalBench
}

// AllDeviations are every difference between what headroom will run and
// what the task's own harness would: those its loader recorded from the
// file, then those of its container profile. Empty when faithful (and
// always for headroom's own tasks, whose harness is headroom).
func (t *Task) AllDeviations() []Deviation {
	out := append([]Deviation(nil), t.Deviations...)
	// In every profile, and for headroom's own tasks: a capability that
	// reaches the host is never a faithful run's business.
	for _, c := range t.HostCapabilityGrants() {
		where := t.CapabilitiesAt[c]
		if where == "" {
			where = t.Source
		}
		out = append(out, Deviation{"capability " + c + " reaches the host",
			where + " asks for it; a run refuses the task unless --allow-capability " + c + " is given"})
	}
	if !t.ForeignHarness() || !t.Hardened() {
		return out
	}
	var dropped []string
	for _, c := range DockerDefaultCapabilities {
		if !slices.Contains(t.Capabilities, c) {
			dropped = append(dropped, c)
		}
	}
	if len(dropped) > 0 {
		out = append(out, Deviation{"hardened profile: capabilities dropped",
			strings.Join(dropped, ", ") + " removed (chroot, mknod, raw sockets such as ping fail); the harness keeps Docker's defaults"})
	}
	out = append(out, Deviation{"hardened profile: no-new-privileges", "setuid programs (sudo, su) cannot gain privileges; the harness allows them"})
	if t.Resources.PidsLimit > 0 {
		out = append(out, Deviation{"hardened profile: pids limited", fmt.Sprintf("at most %d processes; the harness sets no limit", t.Resources.PidsLimit)})
	}
	out = append(out, Deviation{"hardened profile: open files", fmt.Sprintf("the engine's default limit; the harness raises it to %d", HarborNoFile)})
	return out
}

// SuspectedTypo is the deviation a key of a task's file that looks like a
// misspelt known key is listed as: ignored, as the file's own harness
// ignores it, so the key's default applies.
const SuspectedTypo = "suspected typo"

// TypoIgnored ends a suspected typo's Detail.
const TypoIgnored = " (the key is ignored: its default applies)"

// TypoNote says in one line what a task's suspected typos did to its
// trials, or "" for none: each typo as its file has it, then the
// resources that took their defaults — a misspelt memory_mb scales every
// column's limit from the 2 GiB default, and nothing on the matrix said
// so (a new user's).
func TypoNote(devs []Deviation, res Resources) string {
	var said []string
	for _, d := range devs {
		if d.What == SuspectedTypo {
			said = append(said, strings.TrimSuffix(d.Detail, TypoIgnored))
		}
	}
	if said == nil {
		return ""
	}
	note := strings.Join(said, "; ") + ": ignored, as its harness ignores it"
	var defs []string
	if slices.Contains(res.Defaulted, "memory") {
		defs = append(defs, "memory "+FormatBytes(res.MemoryBytes))
	}
	if slices.Contains(res.Defaulted, "cpus") {
		defs = append(defs, "cpus "+strconv.FormatFloat(res.CPUs, 'g', -1, 64))
	}
	if defs != nil {
		note += "; the defaults applied (" + strings.Join(defs, ", ") + "): every column's limits are scaled from them"
	}
	return note
}
