package model

import (
	"testing"
	"time"
)

func TestAttributeNamesEveryCause(t *testing.T) {
	tests := []struct {
		name    string
		e       Evidence
		outcome Outcome
		cause   Cause
	}{
		{"own limit", Evidence{OOMKills: 1}, OOMKilled, CauseOwnLimit},
		{"own limit, passed anyway", Evidence{OOMKills: 1, VerifierPassed: true}, PassedAfterOOM, CauseOwnLimit},
		{"outside pressure is infra, not the ratio's kill", Evidence{OOMKills: 1, OOMOutside: true}, InfraError, CauseOutsidePressure},
		{"killed from outside outranks the engine error it causes", Evidence{KilledBy: "SIGKILL", InfraFailed: true}, InfraError, CauseKilledOutside},
		{"killed from outside outranks a kill count", Evidence{KilledBy: "SIGTERM", OOMKills: 1}, InfraError, CauseKilledOutside},
		{"headroom's own cancel is no outside kill", Evidence{KilledBy: "SIGKILL", Cancelled: true}, Cancelled, CauseNone},
		{"engine lost", Evidence{InfraFailed: true, EngineLost: true}, InfraError, CauseEngineLost},
		{"start failure", Evidence{InfraFailed: true}, InfraError, CauseNone},
		{"agent timeout", Evidence{TimedOut: true, TimedOutPhase: "agent"}, Timeout, CauseAgentTimeout},
		{"verifier timeout", Evidence{TimedOut: true, TimedOutPhase: "verifier"}, Timeout, CauseVerifierTimeout},
		{"stall outranks the phase's timeout", Evidence{TimedOut: true, TimedOutPhase: "agent", Stalled: true}, Timeout, CauseStalled},
		{"a kill outranks a timeout", Evidence{TimedOut: true, OOMKills: 1}, OOMKilled, CauseOwnLimit},
		{"pids limit behind a failure", Evidence{PidsLimitHits: 3}, Failed, CausePidsLimit},
		{"disk full behind a failure", Evidence{DiskFull: true}, Failed, CauseDiskFull},
		{"a pass has no cause", Evidence{VerifierPassed: true, PidsLimitHits: 1}, Passed, CauseNone},
		{"plain failure", Evidence{}, Failed, CauseNone},
	}
	for _, tt := range tests {
		if o, c := Classify(tt.e), Attribute(tt.e); o != tt.outcome || c != tt.cause {
			t.Errorf("%s: %+v → %s/%q, want %s/%q", tt.name, tt.e, o, c, tt.outcome, tt.cause)
		}
	}
}

func TestOutsideCausesCountAsInfraApart(t *testing.T) {
	var r Rates
	r.AddCause(OOMKilled, CauseOwnLimit)
	r.AddCause(InfraError, CauseOutsidePressure)
	r.AddCause(InfraError, CauseKilledOutside)
	r.AddCause(Timeout, CauseStalled)
	r.AddCause(Timeout, CauseAgentTimeout)
	r.AddCause(Failed, CausePidsLimit)
	r.AddCause(PassedAfterOOM, CauseOwnLimit)
	if r.Counted != 7 || r.InfraErrs != 5 || r.OutsideErrs != 2 || r.Successes != 1 {
		t.Errorf("got %+v, want 7 counted, 5 infra (2 from outside), 1 success", r)
	}
}

func TestEveryGlyphIsDistinct(t *testing.T) {
	seen := map[string]string{EmptyCellGlyph: "empty"}
	for _, o := range Outcomes {
		seen[o.Glyph()] = string(o)
	}
	for _, c := range Causes {
		g := c.Glyph()
		if g == "" {
			continue
		}
		if prev, ok := seen[g]; ok {
			t.Errorf("%s glyph %q clashes with %s", c, g, prev)
		}
		seen[g] = string(c)
		if c.Banner("") == "" || c.Describe() == string(c) {
			t.Errorf("%s has no banner or legend", c)
		}
	}
	if TrialGlyph(Cancelled, CauseKilledOutside) != "-" || TrialGlyph(Timeout, CauseAgentTimeout) != "T" || TrialGlyph(InfraError, CauseOutsidePressure) != "P" {
		t.Error("TrialGlyph: cancelled keeps -, a cause without a glyph keeps the outcome's, one with a glyph shows it")
	}
}

func TestStalledAndNoSpace(t *testing.T) {
	if !AtLimit(99, 95, 100) || AtLimit(99, 50, 100) || AtLimit(90, 90, 100) || AtLimit(99, 99, 0) {
		t.Error("AtLimit: 99% charged with 95% in use is at the limit; cache alone, 90% charged or uncapped is not")
	}
	if !Stalled(8*time.Second, 10*time.Second) || Stalled(2*time.Second, 10*time.Second) || Stalled(0, 0) {
		t.Error("Stalled: 8 of 10 s at the limit is a stall, 2 of 10 is not")
	}
	for line, want := range map[string]bool{
		"OSError: [Errno 28] No space left on device":         true,
		"write /scratch/fill: no space left on device":        true,
		"npm ERR! code ENOSPC":                                true,
		"cp: error writing 'x': Disk quota exceeded":          false,
		"everything fine, space left on the device is 10 GiB": false,
	} {
		if NoSpaceInOutput(line) != want {
			t.Errorf("NoSpaceInOutput(%q) != %v", line, want)
		}
	}
}
