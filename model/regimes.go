package model

import (
	"fmt"
	"sort"
	"strings"
)

// The paper's two regimes: between a tight setting and a looser one, a
// change in score is either trials rescued from an infrastructure failure
// (the machine ended them; with room they pass) or trials the extra room
// made easier (they failed cleanly, as the model's own doing, and with
// room they pass: a heavy strategy now fits). 1x → 3x mostly rescues;
// 3x → uncapped mostly makes easier.

// RegimeSplit is how the trials of one column of the matrix (a setting:
// a ratio, or any other swept knob's value) changed in the next. Trials of
// tasks whose repeats replay (replays: the seeded built-in workload draws
// every size from the trial's seed) pair by task, agent and repeat; the
// others' repeat at one column is another draw at the next, so pairing
// them means nothing: they are compared as rates (Unpaired), and said to
// be (docs/STATISTICS.md, "Which repeats pair").
type RegimeSplit struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Pairs are the replaying trials both columns ran and counted.
	Pairs int `json:"pairs"`
	// Rescued: failed by the machine (MachineFailed: killed or stalled
	// at the limit, at it when time ran out, a timeout on a contended
	// host, pressure from outside, any infra cause) in From, passed in
	// To. Easier: failed cleanly in From, passed in To. Regressed: passed
	// in From, not in To. Each with its Wilson 95% interval over Pairs.
	Rescued     int      `json:"rescued"`
	RescuedCI   Interval `json:"rescued_ci"`
	Easier      int      `json:"made_easier"`
	EasierCI    Interval `json:"made_easier_ci"`
	Regressed   int      `json:"regressed"`
	RegressedCI Interval `json:"regressed_ci"`
	// InfraFixed counts infra failures in From that were no longer infra
	// failures in To (whether or not they passed there).
	InfraFixed int `json:"infra_fixed"`
	// Unpaired holds the trials of tasks that draw their need each run,
	// as each column's rates; nil when there are none.
	Unpaired *UnpairedRegimes `json:"unpaired,omitempty"`
}

// UnpairedRegimes compares the two columns' rates over trials that do not
// replay: the machine's failures falling is the rescue, the clean ones
// falling the making easier, by rate and not by trial.
type UnpairedRegimes struct {
	From RegimeRates `json:"from"`
	To   RegimeRates `json:"to"`
}

// RegimeRates are one column's counted runs, passes, and failures by
// the machine (MachineFailed) and clean ones (the model's own).
type RegimeRates struct {
	Runs    int `json:"runs"`
	Passed  int `json:"passed"`
	Machine int `json:"machine_failed"`
	Clean   int `json:"clean_failed"`
}

func (r *RegimeRates) add(t *TrialResult) {
	r.Runs++
	switch {
	case t.Outcome.Success():
		r.Passed++
	case MachineFailed(*t):
		r.Machine++
	default:
		r.Clean++
	}
}

// Change is the change in success rate from From to To.
func (u UnpairedRegimes) Change() float64 {
	return ratio(u.To.Passed, u.To.Runs) - ratio(u.From.Passed, u.From.Runs)
}

// PairedChange is the change in success rate over the pairs.
func (r RegimeSplit) PairedChange() float64 {
	return ratio(r.Rescued+r.Easier, r.Pairs) - ratio(r.Regressed, r.Pairs)
}

// ScoreChange is the change in success rate over every trial: the
// pairs' change and the unpaired rates', weighted by their runs.
func (r RegimeSplit) ScoreChange() float64 {
	if r.Unpaired == nil {
		return r.PairedChange()
	}
	n := max(r.Unpaired.From.Runs, r.Unpaired.To.Runs)
	return (float64(r.Rescued+r.Easier-r.Regressed) + r.Unpaired.Change()*float64(n)) / float64(r.Pairs+n)
}

// MachineFailed says whether the machine, not the model, failed the
// trial: an infra failure (InfraFailed), a failure that reached its own
// memory limit (ReachedLimit: a run stuck at the limit when time ran out
// is the limit's), or a run cut off by its time limit on a contended host
// (its time went to the host). "Made easier" counted those two as the
// model's own failures.
func MachineFailed(t TrialResult) bool {
	if t.Outcome.Success() {
		return false
	}
	return InfraFailed(t) || t.ReachedLimit() || (CutOff(t) && t.Noise != nil && t.Noise.Contended)
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

// SplitRegimes splits the change between the trials of two columns (from,
// the tighter; to, the looser): those of tasks in replays paired by task,
// agent and repeat, the others by rate. Trials that are cancelled, or
// whose task could not run, count nowhere.
func SplitRegimes(fromLabel string, from []TrialResult, toLabel string, to []TrialResult, replays map[string]bool) RegimeSplit {
	return splitRegimes(fromLabel, pointers(from), toLabel, pointers(to), replays)
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

func splitRegimes(fromLabel string, from []*TrialResult, toLabel string, to []*TrialResult, replays map[string]bool) RegimeSplit {
	s := RegimeSplit{From: fromLabel, To: toLabel}
	var u UnpairedRegimes
	before := make(map[pairKey]*TrialResult, len(from))
	for _, t := range from {
		switch {
		case !t.Outcome.Counted() || t.TaskNotRun:
		case !replays[t.Task]:
			u.From.add(t)
		default:
			before[pairKey{t.Task, t.Agent, t.Repeat}] = t
		}
	}
	for _, b := range to {
		if !b.Outcome.Counted() || b.TaskNotRun {
			continue
		}
		if !replays[b.Task] {
			u.To.add(b)
			continue
		}
		a, ok := before[pairKey{b.Task, b.Agent, b.Repeat}]
		if !ok {
			continue
		}
		s.Pairs++
		switch {
		case b.Outcome.Success() && !a.Outcome.Success() && MachineFailed(*a):
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
	if u.From.Runs > 0 && u.To.Runs > 0 {
		s.Unpaired = &u
	}
	return s
}

// AdjacentRegimes splits the change between each pair of adjacent ratios
// of trials (tightest first; uncapped last), pairing the trials of the
// tasks in replays. Columns with other knobs are not on that scale:
// SplitRegimes splits any two of them.
func AdjacentRegimes(trials []TrialResult, replays map[string]bool) []RegimeSplit {
	return AdjacentRegimesOf(pointers(trials), replays)
}

// AdjacentRegimesOf is AdjacentRegimes of the trials at these places (the
// console's, which keeps each trial's result apart: no copies).
func AdjacentRegimesOf(trials []*TrialResult, replays map[string]bool) []RegimeSplit {
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
		s := splitRegimes(ratios[i-1].String(), by[ratios[i-1]], ratios[i].String(), by[ratios[i]], replays)
		if s.Pairs > 0 || s.Unpaired != nil {
			out = append(out, s)
		}
	}
	return out
}

// Compact is the split in a line's width: "1x→3x +25pp: 6 rescued, 0
// easier, 0 regressed", and for trials that do not replay "1x→3x +40pp
// unpaired: machine's failures 6/12→0/12, clean 1/12→1/12".
func (r RegimeSplit) Compact() string {
	var parts []string
	if r.Pairs > 0 {
		parts = append(parts, fmt.Sprintf("%d rescued, %d easier, %d regressed", r.Rescued, r.Easier, r.Regressed))
	}
	if u := r.Unpaired; u != nil {
		parts = append(parts, fmt.Sprintf("unpaired: machine's failures %d/%d→%d/%d, clean %d/%d→%d/%d", u.From.Machine, u.From.Runs, u.To.Machine, u.To.Runs, u.From.Clean, u.From.Runs, u.To.Clean, u.To.Runs))
	}
	return fmt.Sprintf("%s→%s %+.0fpp: %s", r.From, r.To, 100*r.ScoreChange(), strings.Join(parts, "; "))
}
