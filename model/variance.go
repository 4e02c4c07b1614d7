package model

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// WorkloadRepo is the built-in workload image's repository. Its steps draw
// every size and chance from the trial's seed, so a trial in it replays
// exactly; a real task's programs (os.urandom, the network, the clock)
// need not.
const WorkloadRepo = "headroom-workload"

// SeededImage says whether an image replays a trial exactly from its seed.
func SeededImage(image string) bool {
	return image == "builtin" || strings.HasPrefix(image, WorkloadRepo+":") || image == WorkloadRepo
}

// TaskVariance is how much a task varies by itself: its peak and duration
// across the repeats that ran with nothing limiting them (uncapped), beside
// its failures there (intrinsic) and its kills under limits (the limit's).
type TaskVariance struct {
	Task  string `json:"task"`
	Agent string `json:"agent"`
	// Runs are the uncapped counted trials; the peaks and their spread
	// are over those measured to their end: CutOff of them were stopped
	// by a time limit (their peaks, up to CutOffPeakMaxBytes, are lower
	// bounds of their need: censored, not a minimum).
	Runs               int           `json:"runs"`
	CutOff             int           `json:"cut_off"`
	CutOffPeakMaxBytes int64         `json:"cut_off_peak_max_bytes,omitempty"`
	PeakMinBytes       int64         `json:"peak_min_bytes"`
	PeakMedianBytes    int64         `json:"peak_median_bytes"`
	PeakMaxBytes       int64         `json:"peak_max_bytes"`
	DurationMin        time.Duration `json:"duration_min_ns"`
	DurationMax        time.Duration `json:"duration_max_ns"`
	// UncappedFailed counts uncapped runs that did not pass: the task's
	// own flakiness, no limit involved.
	UncappedFailed int `json:"uncapped_failed"`
	// Killed, Stalled and Capped count the memory failures (killed at
	// the limit, stalled at it) among the trials run under a limit: what
	// the limit caused.
	Killed  int `json:"killed"`
	Stalled int `json:"stalled"`
	Capped  int `json:"capped"`
}

// PeaksText is the peaks' range, with the runs cut off by time beside
// it: "180MiB–301MiB (+3 cut off by time, ≥ 410MiB)".
func (v TaskVariance) PeaksText() string {
	s := "-"
	if v.PeakMedianBytes > 0 {
		s = FormatBytes(v.PeakMinBytes) + "–" + FormatBytes(v.PeakMaxBytes)
	}
	if v.CutOff > 0 {
		s += fmt.Sprintf(" (+%d cut off by time, ≥ %s)", v.CutOff, FormatBytes(v.CutOffPeakMaxBytes))
	}
	return s
}

// PeakSpread is the peaks' range over their median (0 with one run).
func (v TaskVariance) PeakSpread() float64 {
	if v.PeakMedianBytes == 0 {
		return 0
	}
	return float64(v.PeakMaxBytes-v.PeakMinBytes) / float64(v.PeakMedianBytes)
}

// Variances measures each row's own variance from its uncapped trials;
// rows without one are left out (nothing ran free to measure).
func Variances(trials []TrialResult) []TaskVariance {
	by := map[RowKey]*TaskVariance{}
	peaks := map[RowKey][]int64{}
	var rows []RowKey
	for _, t := range trials {
		// A knob's trials vary with the knob, not only on their own.
		if !t.Outcome.Counted() || t.Outcome == InfraError || !t.Ratio.Knobs.IsZero() {
			continue
		}
		k := RowKey{t.Task, t.Agent}
		v := by[k]
		if v == nil {
			v = &TaskVariance{Task: t.Task, Agent: t.Agent}
			by[k] = v
			rows = append(rows, k)
		}
		if !t.Ratio.Uncapped {
			v.Capped++
			switch t.MemoryFailure() {
			case KilledAtLimit:
				v.Killed++
			case StalledAtLimit:
				v.Stalled++
			}
			continue
		}
		d := t.End.Sub(t.Start)
		if v.Runs == 0 || d < v.DurationMin {
			v.DurationMin = d
		}
		v.DurationMax = max(v.DurationMax, d)
		v.Runs++
		if !t.Outcome.Success() {
			v.UncappedFailed++
		}
		if CutOff(t) {
			v.CutOff++
			v.CutOffPeakMaxBytes = max(v.CutOffPeakMaxBytes, TrialPeakBytes(t))
			continue
		}
		peaks[k] = append(peaks[k], TrialPeakBytes(t))
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Task != rows[j].Task {
			return rows[i].Task < rows[j].Task
		}
		return rows[i].Agent < rows[j].Agent
	})
	var out []TaskVariance
	for _, k := range rows {
		v := by[k]
		p := peaks[k]
		if v.Runs == 0 {
			continue
		}
		if len(p) > 0 {
			sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
			v.PeakMinBytes, v.PeakMedianBytes, v.PeakMaxBytes = p[0], p[len(p)/2], p[len(p)-1]
		}
		out = append(out, *v)
	}
	return out
}

// OwnVariance is, of one task's runs under one limit, whether the limit
// sits inside the range of the task's own need: some runs failed at it
// (killed by it or stalled at it, by the kernel's evidence) while others
// of the same task passed under it. Then those failures are the task's
// own variance, drawn each run, and not the host's doing.
type OwnVariance struct {
	LimitBytes int64 `json:"limit_bytes"`
	// Runs are the counted runs; Failed failed at the limit; Passed
	// passed, their needs from PassedMinBytes to PassedMaxBytes.
	Runs           int   `json:"runs"`
	Failed         int   `json:"failed"`
	Passed         int   `json:"passed"`
	PassedMinBytes int64 `json:"passed_min_bytes"`
	PassedMaxBytes int64 `json:"passed_max_bytes"`
}

// OwnVarianceAt judges runs of one task and agent under one limit; false
// when the need does not straddle it (no memory failure, no pass under
// the limit, or no limit).
func OwnVarianceAt(trials []TrialResult, limitBytes int64) (OwnVariance, bool) {
	v := OwnVariance{LimitBytes: limitBytes}
	if limitBytes <= 0 {
		return v, false
	}
	for _, t := range trials {
		if !t.Outcome.Counted() {
			continue
		}
		v.Runs++
		switch {
		case t.MemoryFailure().Failed():
			v.Failed++
		case t.Outcome.Success():
			need := TrialPeakBytes(t)
			if need <= 0 || need >= limitBytes {
				continue
			}
			if v.Passed == 0 || need < v.PassedMinBytes {
				v.PassedMinBytes = need
			}
			v.PassedMaxBytes = max(v.PassedMaxBytes, need)
			v.Passed++
		}
	}
	return v, v.Failed > 0 && v.Passed > 0
}

// String is the verdict line: "the task's own variance: 7 of 20 runs
// failed at the 320MiB limit, 13 passed under it needing 165MiB–301MiB;
// it draws its need each run, not the host (calibrate sizes a limit
// above it)".
func (v OwnVariance) String() string {
	return fmt.Sprintf("the task's own variance: %d of %d runs failed at the %s limit, %d passed under it needing %s–%s; it draws its need each run, not the host (a sweep with uncapped runs, then headroom calibrate, sizes a limit above it)",
		v.Failed, v.Runs, FormatBytes(v.LimitBytes), v.Passed, FormatBytes(v.PassedMinBytes), FormatBytes(v.PassedMaxBytes))
}
