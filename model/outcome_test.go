package model

import "testing"

func TestRatesDefinitions(t *testing.T) {
	var r Rates
	for _, o := range []Outcome{Passed, PassedAfterOOM, OOMKilled, InfraError, Failed, Timeout, Cancelled, Cancelled} {
		r.Add(o)
	}
	if r.Counted != 6 {
		t.Errorf("counted %d, want 6 (cancelled trials are not counted)", r.Counted)
	}
	if r.SuccessRate() != 2.0/6 || r.InfraErrorRate() != 2.0/6 {
		t.Errorf("success %v infra %v, want 1/3 each", r.SuccessRate(), r.InfraErrorRate())
	}
	var empty Rates
	if empty.SuccessRate() != 0 || empty.InfraErrorRate() != 0 {
		t.Error("empty rates must be 0, not NaN")
	}
}

func TestEveryOutcomeHasADistinctGlyph(t *testing.T) {
	seen := map[string]Outcome{}
	for _, o := range Outcomes {
		g := o.Glyph()
		if prev, ok := seen[g]; ok || g == "?" || len(g) != 1 {
			t.Errorf("%s glyph %q (clashes with %s)", o, g, prev)
		}
		seen[g] = o
	}
}
