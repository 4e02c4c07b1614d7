package model

import (
	"slices"
	"strings"
	"testing"
)

func TestSetProfilePids(t *testing.T) {
	tests := []struct {
		name    string
		res     Resources
		profile string
		want    int64
	}{
		{"unset, harbor: none", Resources{Defaulted: []string{"pids_limit"}, PidsLimit: DefaultPidsLimit}, ProfileHarbor, 0},
		{"unset, hardened: the default", Resources{Defaulted: []string{"pids_limit"}}, ProfileHardened, DefaultPidsLimit},
		{"zero counts as unset", Resources{}, ProfileHardened, DefaultPidsLimit},
		{"set by the task: kept under harbor", Resources{PidsLimit: 300}, ProfileHarbor, 300},
		{"set by the task: kept hardened", Resources{PidsLimit: 300}, ProfileHardened, 300},
	}
	for _, tt := range tests {
		task := Task{Resources: tt.res}
		task.SetProfile(tt.profile)
		if task.Resources.PidsLimit != tt.want || task.Profile != tt.profile {
			t.Errorf("%s: pids %d profile %q, want %d", tt.name, task.Resources.PidsLimit, task.Profile, tt.want)
		}
		// Switching back and forth lands in the same place.
		task.SetProfile(ProfileHardened)
		task.SetProfile(tt.profile)
		if task.Resources.PidsLimit != tt.want {
			t.Errorf("%s: after a round trip pids %d, want %d", tt.name, task.Resources.PidsLimit, tt.want)
		}
	}
}

func TestParseProfileAndDeviations(t *testing.T) {
	if p, err := ParseProfile(" Hardened "); err != nil || p != ProfileHardened {
		t.Errorf("ParseProfile: %q %v", p, err)
	}
	if _, err := ParseProfile("loose"); err == nil {
		t.Error("ParseProfile accepted loose")
	}
	own := Task{Format: FormatHeadroom, Capabilities: DefaultCapabilities}
	own.SetProfile(ProfileHardened)
	if d := own.AllDeviations(); len(d) != 0 {
		t.Errorf("headroom's own task deviates from headroom: %v", d)
	}
	tb := Task{Format: FormatTerminalBench, Capabilities: append([]string{"NET_RAW"}, DefaultCapabilities...)}
	tb.SetProfile(ProfileHardened)
	var caps string
	for _, d := range tb.AllDeviations() {
		if d.What == "hardened profile: capabilities dropped" {
			caps = d.Detail
		}
	}
	for _, c := range []string{"MKNOD", "SYS_CHROOT", "AUDIT_WRITE"} {
		if !slices.Contains(DockerDefaultCapabilities, c) || caps == "" || !strings.Contains(caps, c) {
			t.Errorf("dropped caps %q lack %s", caps, c)
		}
	}
	if strings.Contains(caps, "NET_RAW") {
		t.Errorf("a capability the task keeps is listed as dropped: %q", caps)
	}
}
