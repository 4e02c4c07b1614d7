package model

import (
	"fmt"
	"math"
	"sort"
)

// HostLoadSummary is an experiment's host load, from its trials' own
// records: the median 1-minute load average read at their starts and ends,
// and the CPU time their steps waited for (HostNoise.CPUWait) over their
// steps' time. Two experiments that differ here ran on different hosts in
// effect, whatever else matches (compare names it).
type HostLoadSummary struct {
	// Trials with a load read; Load1 their median.
	Trials int     `json:"trials"`
	Load1  float64 `json:"load1"`
	// WaitTrials with the CPU wait read; WaitShare its share of their
	// steps' time (threads summed: it can pass 100%).
	WaitTrials int     `json:"wait_trials"`
	WaitShare  float64 `json:"wait_share"`
}

// SummarizeHostLoad summarises the host load of counted trials.
func SummarizeHostLoad(trials []TrialResult) HostLoadSummary {
	var s HostLoadSummary
	var loads []float64
	var wait, steps float64
	for _, t := range trials {
		if !t.Outcome.Counted() {
			continue
		}
		if t.HostAtStart.Load1 > 0 || t.HostAtEnd.Load1 > 0 {
			loads = append(loads, (t.HostAtStart.Load1+t.HostAtEnd.Load1)/2)
		}
		if n := t.Noise; n != nil && n.CPUWaitKnown && n.StepTime > 0 {
			s.WaitTrials++
			wait += float64(n.CPUWait)
			steps += float64(n.StepTime)
		}
	}
	if s.Trials = len(loads); s.Trials > 0 {
		sort.Float64s(loads)
		s.Load1 = loads[len(loads)/2]
		if len(loads)%2 == 0 {
			s.Load1 = (loads[len(loads)/2-1] + loads[len(loads)/2]) / 2
		}
	}
	if steps > 0 {
		s.WaitShare = wait / steps
	}
	return s
}

// String is "load 35.0, CPU wait 61% of step time" ("load unknown" where
// no trial read one).
func (s HostLoadSummary) String() string {
	text := "load unknown"
	if s.Trials > 0 {
		text = fmt.Sprintf("load %.1f", s.Load1)
	}
	if s.WaitTrials > 0 {
		text += fmt.Sprintf(", CPU wait %.0f%% of step time", 100*s.WaitShare)
	}
	return text
}

// Host loads differ by much when one median load is HostLoadTimes the
// other's or more (and over one load point apart), or the CPU wait shares
// are more than HostWaitApart apart: enough, on a small host, to slow
// trials into timeouts and stalls by itself.
const (
	HostLoadTimes = 1.5
	HostWaitApart = 0.20
)

// HostLoadsDiffer says whether two experiments' host loads differ by
// much, with the numbers; "" and false where they do not or where either
// is unknown.
func HostLoadsDiffer(a, b HostLoadSummary) (string, bool) {
	hi, lo := max(a.Load1, b.Load1), min(a.Load1, b.Load1)
	loadApart := a.Trials > 0 && b.Trials > 0 && hi-lo > 1 && hi >= HostLoadTimes*lo
	waitApart := a.WaitTrials > 0 && b.WaitTrials > 0 && math.Abs(a.WaitShare-b.WaitShare) > HostWaitApart
	if !loadApart && !waitApart {
		return "", false
	}
	return fmt.Sprintf("A %s · B %s: the hosts were loaded differently, which can explain a change by itself (timeouts, stalls)", a, b), true
}
