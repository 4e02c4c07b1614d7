package model

import (
	"sort"
	"time"
)

// CellResources is what a cell's trials used: memory peaks and CPU, with
// the throttling the CPU limit caused.
type CellResources struct {
	Trials int `json:"trials"`
	// MedianPeakBytes is the median over trials of each one's peak: the
	// larger of the sampled working set and the kernel's own peak.
	MedianPeakBytes int64 `json:"median_peak_bytes"`
	// CPU is the trials' CPU use summed; CPUTrials how many had a record.
	CPU       CPUUse `json:"cpu"`
	CPUTrials int    `json:"cpu_trials"`
	// WallNanos is the trials' wall time summed, for average cores.
	WallNanos int64 `json:"wall_ns"`
}

// Cores is the cell's average cores while its trials ran.
func (c CellResources) Cores() float64 { return c.CPU.Cores(time.Duration(c.WallNanos)) }

// MeanThrottled is the CPU time withheld per trial, on average.
func (c CellResources) MeanThrottled() time.Duration {
	if c.CPUTrials == 0 {
		return 0
	}
	return c.CPU.Throttled() / time.Duration(c.CPUTrials)
}

// TrialPeakBytes is a trial's peak as best known: the kernel's high-water
// mark catches spikes between samples, the samples what the kernel's
// mark (which can include reclaimable cache) overstates less.
//
// It is a run's one "need": what calibrate and what-if read, and what the
// live line, the plots and the detail call "peak" (PeakLabel).
func TrialPeakBytes(t TrialResult) int64 { return max(t.PeakWorkingSetBytes, t.KernelPeakBytes) }

// StepPeakBytes is a step's need, as TrialPeakBytes is a trial's.
func StepPeakBytes(s StepResult) int64 { return max(s.PeakWorkingSetBytes, s.KernelPeakBytes) }

// PeakLabel is a need as every view writes it: the larger of the sampled
// working set and the kernel's peak, saying which peak each figure is
// where they differ or only one is known: "240.7MiB (kernel; sampled
// 178.8MiB)" where the kernel's is higher, "33MiB (sampled)" while only
// the samples have a figure (a step still running, a kernel with no
// high-water mark). A sampled peak alone under-reads a spike between
// samples and suggests a limit that kills; a bare figure is where the two
// agree (or the samples read higher).
func PeakLabel(sampled, kernel int64, format func(int64) string) string {
	need := max(sampled, kernel)
	switch {
	case kernel > sampled && sampled > 0 && format(sampled) != format(need):
		return format(need) + " (kernel; sampled " + format(sampled) + ")"
	case kernel == 0 && sampled > 0:
		return format(need) + " (sampled)"
	}
	return format(need)
}

// ResourceUse sums what each cell's counted trials used, by row and ratio;
// ok is false when no trial has a CPU record (older experiments).
func ResourceUse(trials []TrialResult) (cells map[RowKey]map[Ratio]*CellResources, ok bool) {
	cells = map[RowKey]map[Ratio]*CellResources{}
	peaks := map[RowKey]map[Ratio][]int64{}
	for _, t := range trials {
		if !t.Outcome.Counted() {
			continue
		}
		key := RowKey{t.Task, t.Agent}
		if cells[key] == nil {
			cells[key], peaks[key] = map[Ratio]*CellResources{}, map[Ratio][]int64{}
		}
		c := cells[key][t.Ratio]
		if c == nil {
			c = &CellResources{}
			cells[key][t.Ratio] = c
		}
		c.Trials++
		peaks[key][t.Ratio] = append(peaks[key][t.Ratio], TrialPeakBytes(t))
		if t.CPU != nil {
			ok = true
			c.CPU = c.CPU.Add(*t.CPU)
			c.CPUTrials++
			for _, s := range t.Steps {
				c.WallNanos += int64(s.Duration())
			}
		}
	}
	for key, row := range peaks {
		for r, p := range row {
			sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
			cells[key][r].MedianPeakBytes = p[len(p)/2]
		}
	}
	return cells, ok
}
