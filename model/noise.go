package model

import (
	"fmt"
	"strings"
)

// HostNoise is what else was happening on the host while a trial ran: the
// kernel's pressure-stall information over the trial's whole span, and
// how many other trials ran beside it.
type HostNoise struct {
	// PSI says whether the kernel offered /proc/pressure; without it the
	// shares are zero and contention is judged by load alone.
	PSI bool `json:"psi"`
	// Shares of the trial's wall time in which some task on the host was
	// stalled waiting for CPU, memory or IO; MemoryFull when every
	// non-idle task was (from the counters' totals at start and end).
	CPUSome    float64 `json:"cpu_some"`
	MemorySome float64 `json:"memory_some"`
	MemoryFull float64 `json:"memory_full"`
	IOSome     float64 `json:"io_some"`
	// Neighbours is the most other trials of the sweep running at once
	// beside this one.
	Neighbours int `json:"neighbours"`
	// NoisyNeighbours are the neighbour containers the trial's column
	// put beside it (the neighbours knob), and NeighbourCores the CPU
	// they used together, on average, while it ran: pressure made on
	// purpose, judged with the rest.
	NoisyNeighbours int     `json:"noisy_neighbours,omitempty"`
	NeighbourCores  float64 `json:"neighbour_cores,omitempty"`
	// PeakLoad1 and MinAvailableBytes are the host's highest 1-minute load
	// and least available memory over the trial: at its start and end and
	// HostReadings times in between (about once a second).
	PeakLoad1         float64 `json:"peak_load1"`
	MinAvailableBytes int64   `json:"min_available_bytes"`
	HostReadings      int     `json:"host_readings"`
	// Contended marks a trial the host's load may have changed; Why says
	// which signals crossed their threshold.
	Contended bool   `json:"contended"`
	Why       string `json:"why,omitempty"`
}

// Thresholds above which a trial counts as contended: a quarter of its
// time with some task waiting for a CPU, a twentieth waiting for memory,
// or a load above the host's CPUs at any point it was read.
const (
	ContendedCPUSome    = 0.25
	ContendedMemorySome = 0.05
)

// Judge sets Contended and Why from the pressure shares and the host's
// highest load over the trial (at its start and end, and PeakLoad1 when
// it was followed in between).
func (n *HostNoise) Judge(start, end HostLoad, hostCPUs int) {
	var why []string
	if n.PSI && n.CPUSome >= ContendedCPUSome {
		why = append(why, fmt.Sprintf("CPU pressure %.0f%%", 100*n.CPUSome))
	}
	if n.PSI && n.MemorySome >= ContendedMemorySome {
		why = append(why, fmt.Sprintf("memory pressure %.0f%%", 100*n.MemorySome))
	}
	if n.NoisyNeighbours > 0 {
		why = append(why, fmt.Sprintf("%d noisy neighbours using %.1f cores", n.NoisyNeighbours, n.NeighbourCores))
	}
	if load := max(start.Load1, end.Load1, n.PeakLoad1); hostCPUs > 0 && load > float64(hostCPUs) {
		why = append(why, fmt.Sprintf("load %.1f on %d CPUs", load, hostCPUs))
	}
	n.Contended, n.Why = len(why) > 0, strings.Join(why, ", ")
}

// NoiseSplit is a ratio's success among quiet and among contended trials.
type NoiseSplit struct {
	Ratio     Ratio `json:"ratio"`
	Quiet     Rates `json:"-"`
	Contended Rates `json:"-"`
	// Unknown counts trials with no noise record (older experiments).
	Unknown int `json:"unknown"`
}

// SplitByNoise tallies each ratio's counted trials into quiet and
// contended; ok is false when no trial has a noise record.
func SplitByNoise(ratios []Ratio, trials []TrialResult) (out []NoiseSplit, ok bool) {
	idx := map[Ratio]int{}
	for _, r := range ratios {
		idx[r] = len(out)
		out = append(out, NoiseSplit{Ratio: r})
	}
	for _, t := range trials {
		i, found := idx[t.Ratio]
		if !found || !t.Outcome.Counted() {
			continue
		}
		switch {
		case t.Noise == nil:
			out[i].Unknown++
		case t.Noise.Contended:
			ok = true
			out[i].Contended.Add(t.Outcome)
		default:
			ok = true
			out[i].Quiet.Add(t.Outcome)
		}
	}
	return out, ok
}
