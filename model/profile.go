package model

import (
	"fmt"
	"slices"
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
