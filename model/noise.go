package model

import (
	"fmt"
	"strings"
	"time"
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
	// OwnMemory says which of the trial's own containers were at their
	// memory limits ("its service cache at its 24MiB limit"): the host's
	// memory pressure is read host-wide, and theirs is in it, so it is
	// not counted as the host's (OwnMemoryAt).
	OwnMemory string `json:"own_memory,omitempty"`
	// NeighbourMemory says which trial of the same run sat at its own
	// memory limit beside this one: its stalls are in the host's memory
	// pressure too, so that pressure is not counted as the host's either
	// (the twenty-fourth attacker's 1: a sleeping trial beside one
	// re-reading its page cache at 64 MiB was "contended, memory pressure
	// 20%", 3 of 3).
	NeighbourMemory string `json:"neighbour_memory,omitempty"`
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
	// CPUWait is the CPU time the trial's threads wanted during its steps
	// and the host did not give it (their run-queue wait; v2: the
	// cgroup's own cpu.pressure), when CPUWaitKnown; OwnCPUWait the rest
	// of that wait, which its own CPU limit and its own threads beyond
	// its cores explain (SplitCPUWait); StepTime is the steps' wall time;
	// StepCPUSome the host's CPU pressure over the trial's own steps (not
	// its container's start and removal, when the engine is busiest).
	CPUWait      Duration `json:"cpu_wait,omitempty"`
	OwnCPUWait   Duration `json:"own_cpu_wait,omitempty"`
	CPUWaitKnown bool     `json:"cpu_wait_known,omitempty"`
	StepTime     Duration `json:"step_time,omitempty"`
	StepCPUSome  float64  `json:"step_cpu_some,omitempty"`
	// Contended marks a trial the host's load may have changed; Why says
	// which signals crossed their threshold, with their numbers. Own says
	// when the trial waited that much behind its own limit and threads
	// instead (not the host's: no contention).
	Contended bool   `json:"contended"`
	Why       string `json:"why,omitempty"`
	Own       string `json:"own,omitempty"`
}

// SplitCPUWait divides what a step's threads waited for a CPU (wait,
// over wall) between the host and the trial itself. The trial could have
// run on cores CPUs (its CPU limit, at most the host's; the host's
// without a limit; 0: unknown, all the wait is the host's): the host
// withheld at most what it could have used and did not (cores × wall −
// use). The rest it waited behind its own quota (throttled) or behind
// its own threads, more than its cores: a cpus = 0.2 task running 4 busy
// threads waited 11.8 s in 3.1 s of steps, all of it its own.
func SplitCPUWait(wait, wall time.Duration, used CPUUse, limitCores float64, hostCPUs int) (host, own time.Duration) {
	cores := limitCores
	if hostCPUs > 0 && (cores <= 0 || cores > float64(hostCPUs)) {
		cores = float64(hostCPUs)
	}
	wait = max(wait, 0)
	if cores <= 0 || wall <= 0 {
		return wait, 0
	}
	room := max(time.Duration(cores*float64(wall))-time.Duration(used.UsageNanos), 0)
	host = min(wait, room)
	return host, wait - host
}

// WaitShare is the trial's CPU wait over its step time: how much of the
// CPU it wanted the host withheld (more than 1 when several threads each
// waited); ok when it was read.
func (n HostNoise) WaitShare() (float64, bool) {
	if !n.CPUWaitKnown || n.StepTime <= 0 {
		return 0, false
	}
	return float64(n.CPUWait) / float64(n.StepTime), true
}

// Contention is the graded measure, in words with its number: the trial's
// own CPU wait where it was read ("waited 3.8s for a CPU in 10.0s of
// steps (38%)"; above 100% when several threads waited at once, which it
// says), else the host's CPU pressure during its steps, else over
// its whole span.
func (n HostNoise) Contention() string {
	if share, ok := n.WaitShare(); ok {
		s := fmt.Sprintf("waited %.1fs for a CPU in %.1fs of steps (%.0f%%)", time.Duration(n.CPUWait).Seconds(), time.Duration(n.StepTime).Seconds(), 100*share)
		if share > 1 {
			// "waited 4.0s … in 2.9s of steps (137%)" read as a bug.
			s = strings.TrimSuffix(s, ")") + ": the waits of its threads added up, so more than its step time)"
		}
		return s
	}
	if n.PSI && n.StepTime > 0 {
		return fmt.Sprintf("host CPU pressure %.0f%% during its steps", 100*n.StepCPUSome)
	}
	if n.PSI {
		return fmt.Sprintf("host CPU pressure %.0f%%", 100*n.CPUSome)
	}
	return fmt.Sprintf("load %.1f", n.PeakLoad1)
}

// Thresholds above which a trial counts as contended: its threads waited
// for a CPU a quarter of its step time (where read; and at least
// ContendedWaitAtLeast); else a quarter of its
// time with some task on the host waiting for a CPU, or a load above the
// host's CPUs at any point it was read; and a twentieth of its time with
// some task waiting for memory.
const (
	ContendedWait       = 0.25
	ContendedCPUSome    = 0.25
	ContendedMemorySome = 0.05
)

// ContendedWaitAtLeast is the least CPU wait that counts, whatever its
// share: a 2.9 ms trial that waited 0.7 ms was contended (the
// twenty-first attacker's 4); a scheduler's tick is milliseconds.
const ContendedWaitAtLeast = 100 * time.Millisecond

// Judge sets Contended and Why. Where the trial's own CPU wait was read
// it decides, graded: a host whose every CPU is busy (pressure 90%, load
// 20) slows a trial only as much as the trial waited, and the host-wide
// signals flagged every trial of a loaded host (80 of 80). Elsewhere the
// host's CPU pressure over the trial's steps (or its span) and its highest
// load decide, as before.
func (n *HostNoise) Judge(start, end HostLoad, hostCPUs int) {
	var why []string
	n.Own = ""
	var own []string
	if n.CPUWaitKnown && n.StepTime > 0 && float64(n.OwnCPUWait) >= ContendedWait*float64(n.StepTime) && time.Duration(n.OwnCPUWait) >= ContendedWaitAtLeast {
		own = append(own, fmt.Sprintf("waited %.1fs for a CPU in %.1fs of steps behind its own CPU limit and its own threads, not the host's", time.Duration(n.OwnCPUWait).Seconds(), time.Duration(n.StepTime).Seconds()))
	}
	if n.PSI && n.MemorySome >= ContendedMemorySome && n.memoryNotTheHosts() != "" {
		own = append(own, fmt.Sprintf("memory pressure %.0f%% while %s, not the host's", 100*n.MemorySome, n.memoryNotTheHosts()))
	}
	n.Own = strings.Join(own, "; ")
	if share, ok := n.WaitShare(); ok {
		if share >= ContendedWait && time.Duration(n.CPUWait) >= ContendedWaitAtLeast {
			why = append(why, n.Contention())
		}
		if n.hostMemoryPressure() {
			why = append(why, fmt.Sprintf("memory pressure %.0f%%", 100*n.MemorySome))
		}
		if n.NoisyNeighbours > 0 {
			// Pressure made on purpose (the neighbours knob), by how much
			// the trial waited in the first reason.
			why = append(why, fmt.Sprintf("%d noisy neighbours using %.1f cores", n.NoisyNeighbours, n.NeighbourCores))
		}
		n.Contended, n.Why = len(why) > 0, strings.Join(why, ", ")
		return
	}
	cpu := n.CPUSome
	if n.StepTime > 0 {
		cpu = n.StepCPUSome
	}
	if n.PSI && cpu >= ContendedCPUSome {
		why = append(why, fmt.Sprintf("CPU pressure %.0f%%", 100*cpu))
	}
	if n.hostMemoryPressure() {
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

// hostMemoryPressure says whether the host's memory pressure counts
// against the trial: over its threshold, and not while the trial's own
// containers were at their memory limits (their stalls are in the
// host-wide figure: a service thrashing at its own 24 MiB made every
// trial of its task contended, "memory pressure 33%", and its failures
// were listed as the host's; the twenty-second attacker's 4).
func (n HostNoise) hostMemoryPressure() bool {
	return n.PSI && n.MemorySome >= ContendedMemorySome && n.memoryNotTheHosts() == ""
}

// memoryNotTheHosts names what was at its memory limit, the trial's own
// containers (OwnMemory) else another trial of its run beside it
// (NeighbourMemory): memory pressure then is not counted as the host's.
func (n HostNoise) memoryNotTheHosts() string {
	if n.OwnMemory != "" {
		return n.OwnMemory
	}
	return n.NeighbourMemory
}

// OwnMemoryAt names the trial's own containers that were at their memory
// limits (HostNoise.OwnMemory), "" when none was: a service killed by the
// OOM killer or whose peak reached nine tenths of its limit, and the
// task's container where a step spent time at its hard limit, the kernel
// killed in it, or its kernel peak reached nine tenths of its hard limit
// (its own page cache re-read at the limit: no step's time at the limit
// counted it, no kill came, and the stalls it made on the host's pressure
// were charged to the host, 4 of 4, the twenty-fourth attacker's 1b).
func OwnMemoryAt(r TrialResult) string {
	var at []string
	for _, sc := range r.Sidecars {
		if sc.OOMKilled || (sc.LimitBytes > 0 && sc.PeakBytes*10 >= sc.LimitBytes*9) {
			at = append(at, "its service "+sc.Name+" at its "+FormatBytes(sc.LimitBytes)+" limit")
		}
	}
	var atLimit time.Duration
	for _, st := range r.Steps {
		atLimit += time.Duration(st.AtLimit)
	}
	nearLimit := r.Policy.HardLimitBytes > 0 && r.KernelPeakBytes*10 >= r.Policy.HardLimitBytes*9
	if atLimit > 0 || len(r.OOMs) > 0 || nearLimit {
		at = append(at, "its own container at its memory limit")
	}
	return strings.Join(at, " and ")
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

// LoadedHost says whether a host's load average is above its CPUs (the
// 1- or 5-minute one: a burst or a standing load), and says so with the
// numbers: what doctor warns of before a sweep, since a loaded host
// slows every trial (timeouts, stalls) and changes the results.
func LoadedHost(load1, load5 float64, cpus int) (bool, string) {
	text := fmt.Sprintf("load average %.1f (1 min), %.1f (5 min) on %d CPUs", load1, load5, cpus)
	if cpus <= 0 || max(load1, load5) <= float64(cpus) {
		return false, text
	}
	return true, text + fmt.Sprintf(": %.1f× its CPUs; trials will wait for a CPU, run slower and time out or stall more than on a quiet host", max(load1, load5)/float64(cpus))
}

// HostSwap says whether a host with swapBytes of swap takes results that
// may differ from Harbor's, and how: headroom's containers get no swap
// (MemorySwap = Memory: the limit is where the kernel kills), where
// Harbor's compose leaves the engine's default, swap as large again as
// the limit, so that a task a little over its memory swaps there and is
// OOM-killed here. A host without swap runs both alike.
func HostSwap(swapBytes int64) (bool, string) {
	if swapBytes <= 0 {
		return false, "none: containers swap under no harness here"
	}
	return true, FormatBytes(swapBytes) + " of swap: headroom's containers get none (the limit is where the kernel kills), Harbor's compose lets each swap as much again as its limit, so a task a little over its memory may pass there and be OOM-killed here"
}
