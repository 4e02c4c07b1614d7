package model

import (
	"fmt"
	"sort"
)

// The paper's two regimes: between a tight setting and a looser one, a
// change in score is either trials rescued from an infrastructure failure
// (the machine ended them; with room they pass) or trials the extra room
// made easier (they failed cleanly, as the model's own doing, and with
// room they pass: a heavy strategy now fits). 1x → 3x mostly rescues;
// 3x → uncapped mostly makes easier.

// RegimeSplit is how the trials of one column of the matrix (a setting:
// a ratio, or any other swept knob's value) changed in the next, paired
// by task, agent and repeat (the repeat carries the seed, so seeded
// trials pair as replays).
type RegimeSplit struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Pairs are the trials both columns ran and counted.
	Pairs int `json:"pairs"`
	// Rescued: failed by the machine (killed or stalled at the limit,
	// pressure from outside, any infra cause) in From, passed in To.
	// Easier: failed cleanly in From, passed in To. Regressed: passed in
	// From, not in To. Each with its Wilson 95% interval over Pairs.
	Rescued     int      `json:"rescued"`
	RescuedCI   Interval `json:"rescued_ci"`
	Easier      int      `json:"made_easier"`
	EasierCI    Interval `json:"made_easier_ci"`
	Regressed   int      `json:"regressed"`
	RegressedCI Interval `json:"regressed_ci"`
	// InfraFixed counts infra failures in From that were no longer infra
	// failures in To (whether or not they passed there).
	InfraFixed int `json:"infra_fixed"`
}

// ScoreChange is the change in success rate over the pairs.
func (r RegimeSplit) ScoreChange() float64 {
	return ratio(r.Rescued+r.Easier, r.Pairs) - ratio(r.Regressed, r.Pairs)
}

// InfraFailed says whether the machine ended the trial: an infra outcome
// or cause (killed or stalled at its limit, pressure from outside, the
// engine, the pids limit, a full disk) on a trial that did not pass.
func InfraFailed(t TrialResult) bool {
	return !t.Outcome.Success() && (t.Outcome.InfraFailure() || t.Cause.Infra())
}

// pairKey pairs trials across two columns.
type pairKey struct {
	task, agent string
	repeat      int
}

// SplitRegimes pairs the trials of two columns (from, the tighter; to,
// the looser) by task, agent and repeat and splits the change between
// them. Trials that are cancelled, or whose task could not run, pair with
// nothing.
func SplitRegimes(fromLabel string, from []TrialResult, toLabel string, to []TrialResult) RegimeSplit {
	return splitRegimes(fromLabel, pointers(from), toLabel, pointers(to))
}

// pointers points at each trial (a trial is ~1 KB: the splits index and
// pair them without copying).
func pointers(trials []TrialResult) []*TrialResult {
	out := make([]*TrialResult, len(trials))
	for i := range trials {
		out[i] = &trials[i]
	}
	return out
}

func splitRegimes(fromLabel string, from []*TrialResult, toLabel string, to []*TrialResult) RegimeSplit {
	s := RegimeSplit{From: fromLabel, To: toLabel}
	before := make(map[pairKey]*TrialResult, len(from))
	for _, t := range from {
		if t.Outcome.Counted() && !t.TaskNotRun {
			before[pairKey{t.Task, t.Agent, t.Repeat}] = t
		}
	}
	for _, b := range to {
		if !b.Outcome.Counted() || b.TaskNotRun {
			continue
		}
		a, ok := before[pairKey{b.Task, b.Agent, b.Repeat}]
		if !ok {
			continue
		}
		s.Pairs++
		switch {
		case b.Outcome.Success() && !a.Outcome.Success() && InfraFailed(*a):
			s.Rescued++
		case b.Outcome.Success() && !a.Outcome.Success():
			s.Easier++
		case a.Outcome.Success() && !b.Outcome.Success():
			s.Regressed++
		}
		if InfraFailed(*a) && !InfraFailed(*b) {
			s.InfraFixed++
		}
	}
	s.RescuedCI, s.EasierCI, s.RegressedCI = Wilson(s.Rescued, s.Pairs), Wilson(s.Easier, s.Pairs), Wilson(s.Regressed, s.Pairs)
	return s
}

// AdjacentRegimes splits the change between each pair of adjacent ratios
// of trials (tightest first; uncapped last). Columns with other knobs are
// not on that scale: SplitRegimes pairs any two of them.
func AdjacentRegimes(trials []TrialResult) []RegimeSplit {
	return AdjacentRegimesOf(pointers(trials))
}

// AdjacentRegimesOf is AdjacentRegimes of the trials at these places (the
// console's, which keeps each trial's result apart: no copies).
func AdjacentRegimesOf(trials []*TrialResult) []RegimeSplit {
	by := map[Ratio][]*TrialResult{}
	var ratios []Ratio
	for _, t := range trials {
		if !t.Ratio.Knobs.IsZero() {
			continue
		}
		if _, ok := by[t.Ratio]; !ok {
			ratios = append(ratios, t.Ratio)
		}
		by[t.Ratio] = append(by[t.Ratio], t)
	}
	sort.Slice(ratios, func(i, j int) bool { return ratios[i].Less(ratios[j]) })
	var out []RegimeSplit
	for i := 1; i < len(ratios); i++ {
		s := splitRegimes(ratios[i-1].String(), by[ratios[i-1]], ratios[i].String(), by[ratios[i]])
		if s.Pairs > 0 {
			out = append(out, s)
		}
	}
	return out
}

// Compact is the split in a line's width: "1x→3x +25pp: 6 rescued, 0
// easier, 0 regressed".
func (r RegimeSplit) Compact() string {
	return fmt.Sprintf("%s→%s %+.0fpp: %d rescued, %d easier, %d regressed", r.From, r.To, 100*r.ScoreChange(), r.Rescued, r.Easier, r.Regressed)
}
