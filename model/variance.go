package model

import (
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
	// Runs are the uncapped counted trials; the spread is over them.
	Runs            int           `json:"runs"`
	PeakMinBytes    int64         `json:"peak_min_bytes"`
	PeakMedianBytes int64         `json:"peak_median_bytes"`
	PeakMaxBytes    int64         `json:"peak_max_bytes"`
	DurationMin     time.Duration `json:"duration_min_ns"`
	DurationMax     time.Duration `json:"duration_max_ns"`
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
		if len(p) == 0 {
			continue
		}
		sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
		v.PeakMinBytes, v.PeakMedianBytes, v.PeakMaxBytes = p[0], p[len(p)/2], p[len(p)-1]
		out = append(out, *v)
	}
	return out
}
