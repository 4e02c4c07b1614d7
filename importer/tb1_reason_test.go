package importer

import (
	"testing"
)

// A record with no times whose outcome says nothing more (resolved):
// its reason is the note alone, with no separator before it (it read
// "; terminal-bench recorded no times …", the thirty-second attacker's 5).
func TestNoTimesReasonHasNoStraySeparator(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		resolved *bool
		mode     string
		want     string
	}{
		{&yes, "unset", "terminal-bench recorded no times (the trial ended before it started)"},
		{&no, "agent_timeout", "agent ran past its time limit (agent_timeout), and the tests did not resolve it; terminal-bench recorded no times (the trial ended before it started)"},
	} {
		got := tbTrial("run", tbMetadata{}, "a", "", tbRecord{TaskID: "t", TrialName: "t.1", IsResolved: c.resolved, FailureMode: c.mode}).reason
		if got != c.want {
			t.Errorf("resolved %v %s: reason %q, want %q", *c.resolved, c.mode, got, c.want)
		}
	}
}
