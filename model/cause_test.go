package model

import (
	"strings"
	"testing"
	"time"
)

func TestClassifyNamesOutcomeAndCause(t *testing.T) {
	tests := []struct {
		name    string
		e       Evidence
		outcome Outcome
		cause   Cause
	}{
		{"own limit", Evidence{OOMKills: 1, LimitBytes: 64 * MiB}, OOMKilled, CauseOwnLimit},
		{"own limit, passed anyway", Evidence{OOMKills: 1, LimitBytes: 64 * MiB, LimitHits: 2, LimitHitsKnown: true, VerifierPassed: true}, PassedAfterOOM, CauseOwnLimit},
		{"outside pressure is infra, not the ratio's kill", Evidence{OOMKills: 1, LimitBytes: 64 * MiB, LimitHitsKnown: true}, InfraError, CauseOutsidePressure},
		{"no limit of its own: outside", Evidence{OOMKills: 1}, InfraError, CauseOutsidePressure},
		// Seen: the sampler missed the last half-second under load and the
		// hit counter read 0 after the step's peak was reset, while the
		// step's own kernel peak was the limit exactly (376 MiB).
		{"the kernel's peak at the limit is the own limit whatever the counters say", Evidence{OOMKills: 1, LimitBytes: 376 * MiB, KernelPeakBytes: 376 * MiB, LimitHitsKnown: true}, OOMKilled, CauseOwnLimit},
		{"a kernel peak a charge batch short is still the limit", Evidence{OOMKills: 1, LimitBytes: 376 * MiB, KernelPeakBytes: 376*MiB - 256*1024, LimitHitsKnown: true}, OOMKilled, CauseOwnLimit},
		{"a kernel peak well under the limit with no hits is outside", Evidence{OOMKills: 1, LimitBytes: 376 * MiB, KernelPeakBytes: 200 * MiB, LimitHitsKnown: true}, InfraError, CauseOutsidePressure},
		{"hits unknown: own limit", Evidence{OOMKills: 1, LimitBytes: 376 * MiB}, OOMKilled, CauseOwnLimit},
		{"outside pressure survived", Evidence{OOMKills: 1, VerifierPassed: true, LimitBytes: 64 * MiB, LimitHitsKnown: true}, PassedAfterOOM, CauseOutsidePressure},
		{"killed from outside outranks the engine error it causes", Evidence{KilledBy: "SIGKILL", InfraFailed: true}, InfraError, CauseKilledOutside},
		{"killed from outside outranks a kill count", Evidence{KilledBy: "SIGTERM", OOMKills: 1}, InfraError, CauseKilledOutside},
		// Seen (#24 item 7): docker update --memory raised mid-trial, then
		// "passed 1x, peak 212MiB / limit 128MiB"; lowered, an own-limit
		// kill charged to 1x.
		{"a limit changed from outside outranks a pass", Evidence{LimitChanged: "128MiB to 256MiB", VerifierPassed: true}, InfraError, CauseLimitChanged},
		{"a limit changed from outside outranks the kill it caused", Evidence{LimitChanged: "64MiB to 48MiB", OOMKills: 1, LimitBytes: 64 * MiB}, InfraError, CauseLimitChanged},
		// Seen (#24 item 6): docker pause of a trial past its limit was an
		// agent-timeout charged to the task.
		{"a timeout after a freeze is the freeze's", Evidence{TimedOut: true, TimedOutPhase: "agent", Frozen: "paused 25s"}, InfraError, CauseFrozen},
		{"a freeze without a timeout changes nothing", Evidence{VerifierPassed: true, Frozen: "paused 2s"}, Passed, CauseNone},
		{"a kill outranks a freeze", Evidence{TimedOut: true, Frozen: "paused 2s", OOMKills: 1, LimitBytes: 64 * MiB}, OOMKilled, CauseOwnLimit},
		{"a cancel stays a cancel whatever the limit did", Evidence{LimitChanged: "64MiB to 48MiB", Cancelled: true}, Cancelled, CauseNone},
		{"headroom's own cancel is no outside kill", Evidence{KilledBy: "SIGKILL", Cancelled: true}, Cancelled, CauseNone},
		// Seen (1 demo trial in 20, loaded host, cgroup v1): the step
		// killed at 128MiB, the driver 7 ms later; the container ended
		// and the trial was "the engine went away" (engine-lost).
		{"the driver killed after the step is not graded, not the engine's", Evidence{DriverKilled: true, OOMKills: 2, LimitBytes: 128 * MiB, InfraFailed: true, EngineLost: true}, InfraError, CauseDriverKilled},
		{"a pass before the driver's kill stands", Evidence{DriverKilled: true, OOMKills: 2, LimitBytes: 128 * MiB, VerifierPassed: true}, PassedAfterOOM, CauseOwnLimit},
		{"engine lost", Evidence{InfraFailed: true, EngineLost: true}, InfraError, CauseEngineLost},
		{"start failure", Evidence{InfraFailed: true}, InfraError, CauseNone},
		{"infra outranks a pass and a kill", Evidence{InfraFailed: true, VerifierPassed: true, OOMKills: 1}, InfraError, CauseNone},
		{"cancelled", Evidence{Cancelled: true, OOMKills: 1}, Cancelled, CauseNone},
		{"clean pass", Evidence{VerifierPassed: true}, Passed, CauseNone},
		{"agent timeout", Evidence{TimedOut: true, TimedOutPhase: "agent"}, Timeout, CauseAgentTimeout},
		{"verifier timeout", Evidence{TimedOut: true, TimedOutPhase: "verifier"}, Timeout, CauseVerifierTimeout},
		{"stall outranks the phase's timeout", Evidence{TimedOut: true, TimedOutPhase: "agent", Stall: &StallEvidence{LimitBytes: 64 * MiB, Duration: Duration(10 * time.Second), AtLimit: Duration(8 * time.Second), MajorFaults: 5000}}, Timeout, CauseStalled},
		{"a timeout not at the limit is the phase's", Evidence{TimedOut: true, TimedOutPhase: "agent", Stall: &StallEvidence{LimitBytes: 64 * MiB, Duration: Duration(10 * time.Second)}}, Timeout, CauseAgentTimeout},
		{"a kill outranks a timeout", Evidence{TimedOut: true, OOMKills: 1, LimitBytes: 64 * MiB}, OOMKilled, CauseOwnLimit},
		{"pids limit behind a failure", Evidence{PidsLimitHits: 3}, Failed, CausePidsLimit},
		{"disk full behind a failure", Evidence{DiskFull: true}, Failed, CauseDiskFull},
		{"a pass has no cause", Evidence{VerifierPassed: true, PidsLimitHits: 1}, Passed, CauseNone},
		{"plain failure", Evidence{}, Failed, CauseNone},
	}
	for _, tt := range tests {
		if o, c := Classify(tt.e); o != tt.outcome || c != tt.cause {
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

func TestAtLimitAndNoSpace(t *testing.T) {
	if !AtLimit(99, 95, 100) || AtLimit(99, 50, 100) || AtLimit(90, 90, 100) || AtLimit(99, 99, 0) {
		t.Error("AtLimit: 99% charged with 95% in use is at the limit; cache alone, 90% charged or uncapped is not")
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

func TestStallIsGradedNotACliff(t *testing.T) {
	sec := func(f float64) Duration { return Duration(time.Duration(f * float64(time.Second))) }
	faults := func(n int64) *int64 { return &n }
	limit := int64(320 * MiB)
	tests := []struct {
		name string
		e    StallEvidence
		want bool
	}{
		// Seen: 6.85 s of a 14.7 s step at the limit (46.6%) with 6,652
		// major faults: recorded as a plain agent timeout under the 50%
		// rule.
		{"under half the step, thrashing while at the limit", StallEvidence{LimitBytes: limit, Duration: sec(14.7), AtLimit: sec(6.85), MajorFaults: 6652, MajorFaultsAtLimit: faults(6400)}, true},
		{"the same in a record without the faults at the limit: the step's rate", StallEvidence{LimitBytes: limit, Duration: sec(14.7), AtLimit: sec(6.85), MajorFaults: 6652}, true},
		{"pinned most of the step, thrashing", StallEvidence{LimitBytes: limit, Duration: sec(10), AtLimit: sec(8), MajorFaults: 5000}, true},
		// The twelfth attacker's 7: a program that holds its memory at
		// the limit and sleeps is not slowed by it.
		{"pinned the whole step, quiet there", StallEvidence{LimitBytes: limit, Duration: sec(6), AtLimit: sec(5.95), MajorFaults: 0, MajorFaultsAtLimit: faults(0)}, false},
		{"pinned the whole step, a few faults a second", StallEvidence{LimitBytes: limit, Duration: sec(60), AtLimit: sec(58), MajorFaults: 240, MajorFaultsAtLimit: faults(232)}, false},
		{"at the limit a while, quiet there", StallEvidence{LimitBytes: limit, Duration: sec(14.7), AtLimit: sec(6.85), MajorFaults: 250}, false},
		// Python's start-up faults hard, away from the limit: not
		// thrashing (the clean-run bar was made of these).
		{"faults at start-up, quiet at the limit", StallEvidence{LimitBytes: limit, Duration: sec(14.7), AtLimit: sec(6.85), MajorFaults: 6652, MajorFaultsAtLimit: faults(300)}, false},
		{"thrashing but barely at the limit", StallEvidence{LimitBytes: limit, Duration: sec(14.7), AtLimit: sec(0.5), MajorFaults: 6652}, false},
		{"the kernel's own peak stayed under the limit", StallEvidence{LimitBytes: limit, Duration: sec(10), AtLimit: sec(8), KernelPeakBytes: 250 * MiB}, false},
		{"the kernel's peak at the limit bears the samples out", StallEvidence{LimitBytes: limit, Duration: sec(10), AtLimit: sec(8), MajorFaults: 5000, KernelPeakBytes: limit}, true},
		{"uncapped never stalls at a limit", StallEvidence{Duration: sec(14.7), AtLimit: sec(14), MajorFaults: 6652}, false},
	}
	for _, tt := range tests {
		if got := tt.e.Judge(); got != tt.want {
			t.Errorf("%s: %s: stalled %v, want %v", tt.name, tt.e, got, tt.want)
		}
	}
}

// Equal evidence, equal verdicts: t0001 (the sweep's first timeout) was
// STALLED and t0045 (after clean runs had set a bar from Python's
// start-up faults) a plain TIMEOUT blamed on the host, on the same
// numbers. The verdict reads the trial's own record only.
func TestStallVerdictIsTheRecordsAlone(t *testing.T) {
	sec := func(f float64) Duration { return Duration(time.Duration(f * float64(time.Second))) }
	limit := int64(320 * MiB)
	t0001 := StallEvidence{LimitBytes: limit, Duration: sec(14.9), AtLimit: sec(5.1), MajorFaults: 2818, KernelPeakBytes: limit}
	t0045 := StallEvidence{LimitBytes: limit, Duration: sec(14.8), AtLimit: sec(6.7), MajorFaults: 2836, KernelPeakBytes: limit}
	if !t0001.Judge() || !t0045.Judge() {
		t.Errorf("t0001 %v (%s), t0045 %v (%s): both thrashed at the limit for a third of their step", t0001.Judge(), t0001, t0045.Judge(), t0045)
	}
	if want := "5.1s of 14.9s (34%) at ≥98% of the limit, 2818 major faults (189/s over the step; a stall thrashes ≥100/s)"; t0001.String() != want {
		t.Errorf("evidence reads %q, want %q", t0001.String(), want)
	}
}

// On a loaded host every trial saw the host's pressure (90%+) and load
// (20 on 2 CPUs), so the yes/no flag marked 80 of 80. The trial's own CPU
// wait tells the one the host slowed from the one it did not.
func TestContentionIsGradedByTheTrialsOwnWait(t *testing.T) {
	loaded := func(wait time.Duration) HostNoise {
		return HostNoise{PSI: true, CPUSome: 0.95, PeakLoad1: 20, StepCPUSome: 0.93, StepTime: Duration(10 * time.Second), CPUWait: Duration(wait), CPUWaitKnown: true}
	}
	calm, starved := loaded(500*time.Millisecond), loaded(4*time.Second)
	calm.Judge(HostLoad{Load1: 20}, HostLoad{Load1: 19}, 2)
	starved.Judge(HostLoad{Load1: 20}, HostLoad{Load1: 19}, 2)
	if calm.Contended {
		t.Errorf("waited 5%% of its steps: not contended, whatever the host's load (%s)", calm.Why)
	}
	if !starved.Contended || starved.Why != "waited 4.0s for a CPU in 10.0s of steps (40%)" {
		t.Errorf("waited 40%%: contended, with its number; got %v %q", starved.Contended, starved.Why)
	}
	// A wait too short to be the host's doing, whatever its share: a
	// 2.9 ms trial that waited 0.7 ms (the twenty-first attacker's 4).
	tiny := HostNoise{StepTime: Duration(2900 * time.Microsecond), CPUWait: Duration(700 * time.Microsecond), CPUWaitKnown: true}
	tiny.Judge(HostLoad{}, HostLoad{}, 2)
	if tiny.Contended {
		t.Errorf("0.7 ms of wait in 2.9 ms: not contended (%s)", tiny.Why)
	}
	// Without the wait (another backend), the host's pressure over its
	// own steps decides, as before.
	old := HostNoise{PSI: true, CPUSome: 0.95, StepCPUSome: 0.1, StepTime: Duration(10 * time.Second)}
	old.Judge(HostLoad{}, HostLoad{}, 2)
	if old.Contended {
		t.Errorf("host pressure 10%% during its steps: not contended (%s)", old.Why)
	}
}

// Seen (hostile F7): a step that printed "No space left on device" and
// exited 1 on a disk with gigabytes free was recorded disk-full and
// counted as an infra error. Fullness is the filesystem's, not the words.
func TestFullDiskNeedsTheMachinesCount(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    FSRoom
		full bool
	}{
		{"a filled 4 MiB tmpfs", FSRoom{Path: "/scratch", Type: "tmpfs", Size: 4 * MiB, Free: 0}, true},
		{"a 4 MiB tmpfs with room", FSRoom{Path: "/scratch", Type: "tmpfs", Size: 4 * MiB, Free: 3 * MiB}, false},
		{"a 4 MiB tmpfs with one page left", FSRoom{Size: 4 * MiB, Free: 4096}, true},
		{"a big disk with gigabytes free", FSRoom{Path: "/", Type: "overlay", Size: 100 * 1024 * MiB, Free: 20 * 1024 * MiB}, false},
		{"a big disk down to its last MiBs", FSRoom{Path: "/", Type: "overlay", Size: 100 * 1024 * MiB, Free: 10 * MiB}, true},
		{"a disk with room but no inode", FSRoom{Size: 1024 * MiB, Free: 900 * MiB, Files: 1000, FreeFiles: 0}, true},
		{"a pseudo filesystem has no size", FSRoom{Path: "/proc", Type: "proc"}, false},
	} {
		if tt.r.Full() != tt.full {
			t.Errorf("%s: %s: Full() = %v", tt.name, tt.r, !tt.full)
		}
	}
	if got := FullDisk([]FSRoom{{Path: "/", Type: "overlay", Size: 100 * 1024 * MiB, Free: 20 * 1024 * MiB}, {Path: "/scratch", Type: "tmpfs", Size: 4 * MiB}}); got != "/scratch (tmpfs) had 0B of 4MiB free" {
		t.Errorf("FullDisk: %q", got)
	}
}

// Seen (round five, finding 4): a task that filled the container's own
// /dev/shm (the engine's fixed 64 MiB tmpfs) and failed was recorded
// infra-error · disk-full. Only a filesystem the machine gives (the
// writable layer, a volume, the operator's scratch tmpfs) makes an ENOSPC
// a full disk; the container's own tmpfs full is the task's.
func TestFullOwnTmpfsIsNotTheMachinesDisk(t *testing.T) {
	layer := FSRoom{Path: "/", Type: "overlay", Size: 100 * 1024 * MiB, Free: 20 * 1024 * MiB}
	shm := FSRoom{Path: "/dev/shm", Type: "tmpfs", Size: 64 * MiB, Free: 0, Own: true}
	dev := FSRoom{Path: "/dev", Type: "tmpfs", Size: 64 * MiB, Free: 64 * MiB, Own: true}
	if got := FullDisk([]FSRoom{layer, dev, shm}); got != "" {
		t.Errorf("FullDisk with only the container's own /dev/shm full = %q; want \"\": a full per-container tmpfs is not the machine's disk", got)
	}
	if got := FullOwnTmpfs([]FSRoom{layer, dev, shm}); got != "/dev/shm (tmpfs) had 0B of 64MiB free" {
		t.Errorf("FullOwnTmpfs = %q; want the full /dev/shm named", got)
	}
	scratch := FSRoom{Path: "/scratch", Type: "tmpfs", Size: 4 * MiB} // the operator's (docker.Options.Tmpfs): not Own
	if got := FullDisk([]FSRoom{layer, shm, scratch}); got != "/scratch (tmpfs) had 0B of 4MiB free" {
		t.Errorf("FullDisk with the operator's scratch tmpfs full = %q; want it named: the faults suite's disk-full row", got)
	}
	full := FSRoom{Path: "/", Type: "overlay", Size: 100 * 1024 * MiB, Free: 1 * MiB}
	if got := FullDisk([]FSRoom{shm, full}); got != full.String() {
		t.Errorf("FullDisk with /dev/shm and the writable layer full = %q; want the writable layer: the machine's disk outranks the task's tmpfs", got)
	}
	if got := FullOwnTmpfs([]FSRoom{layer, dev}); got != "" {
		t.Errorf("FullOwnTmpfs with room everywhere = %q", got)
	}
}

// Seen (hostile F6): the task's idle command `sleep 3` ended under a 6 s
// step; the engine then refused the verifier's exec ("is not running")
// and the trial was recorded infra-error · engine-lost, left out of the
// comparison. The container's own exit is the task's failure.
func TestContainerExitedByItselfIsTheTasks(t *testing.T) {
	for _, tt := range []struct {
		name    string
		e       Evidence
		outcome Outcome
		cause   Cause
	}{
		{"the engine refused a step of a container that had exited", Evidence{InfraFailed: true, EngineLost: true, ContainerExited: "its main process `sleep 3` ended, exit 0"}, Failed, CauseNone},
		{"a main process OOM-killed is a kill", Evidence{InfraFailed: true, EngineLost: true, ContainerExited: "x", OOMKills: 1, LimitBytes: 64 * MiB}, OOMKilled, CauseOwnLimit},
		{"a kill from outside outranks it", Evidence{InfraFailed: true, ContainerExited: "x", KilledBy: "SIGKILL"}, InfraError, CauseKilledOutside},
		{"a cancel stays a cancel", Evidence{InfraFailed: true, ContainerExited: "x", Cancelled: true}, Cancelled, CauseNone},
	} {
		if o, c := Classify(tt.e); o != tt.outcome || c != tt.cause {
			t.Errorf("%s: %s/%q, want %s/%q", tt.name, o, c, tt.outcome, tt.cause)
		}
	}
}

// A trial's CPU wait is added up over its threads, so it can pass its
// step time: "waited 4.0s for a CPU in 2.9s of steps (137%)" said so
// nowhere and read as a bug.
func TestAWaitAboveTheStepTimeSaysItAddsUpThreads(t *testing.T) {
	n := HostNoise{CPUWaitKnown: true, CPUWait: Duration(4 * time.Second), StepTime: Duration(2900 * time.Millisecond)}
	if got, want := n.Contention(), "waited 4.0s for a CPU in 2.9s of steps (138%: the waits of its threads added up, so more than its step time)"; got != want {
		t.Errorf("Contention() = %q, want %q", got, want)
	}
	n.CPUWait = Duration(time.Second)
	if got, want := n.Contention(), "waited 1.0s for a CPU in 2.9s of steps (34%)"; got != want {
		t.Errorf("Contention() = %q, want %q", got, want)
	}
}

// The host's memory pressure is read host-wide, and a trial's own service
// thrashing at its limit is in it: such a trial is not contended by it
// (the twenty-second attacker's 4: every trial of the task "memory
// pressure 33%", and its own failures listed as the host's); the record
// says why. A trial none of whose containers was at its limit still is.
func TestOwnMemoryPressureIsNotTheHosts(t *testing.T) {
	r := TrialResult{Sidecars: []SidecarUsage{{Name: "cache", PeakBytes: 24 * MiB, LimitBytes: 24 * MiB}, {Name: "db", PeakBytes: 10 * MiB, LimitBytes: 256 * MiB}}}
	own := OwnMemoryAt(r)
	if own != "its service cache at its 24MiB limit" {
		t.Errorf("own memory %q", own)
	}
	n := HostNoise{PSI: true, MemorySome: 0.33, StepTime: Duration(10 * time.Second), CPUWait: Duration(10 * time.Millisecond), CPUWaitKnown: true, OwnMemory: own}
	n.Judge(HostLoad{}, HostLoad{}, 2)
	if n.Contended || !strings.Contains(n.Own, "memory pressure 33% while its service cache at its 24MiB limit, not the host's") {
		t.Errorf("contended %v (%s), own %q", n.Contended, n.Why, n.Own)
	}
	n.OwnMemory = OwnMemoryAt(TrialResult{Sidecars: r.Sidecars[1:]})
	n.Judge(HostLoad{}, HostLoad{}, 2)
	if !n.Contended || n.Why != "memory pressure 33%" {
		t.Errorf("no container of its own at its limit: contended %v (%s)", n.Contended, n.Why)
	}
	if got := OwnMemoryAt(TrialResult{Steps: []StepResult{{AtLimit: Duration(time.Second)}}}); got != "its own container at its memory limit" {
		t.Errorf("a step at its limit: %q", got)
	}
	// Its own page cache re-read at its 64 MiB limit: no step's time at
	// the limit, no kill, the kernel's peak at the limit (the
	// twenty-fourth attacker's 1b: 68,419,584 against 64 MiB).
	thrash := TrialResult{Trial: Trial{Policy: ResourcePolicy{HardLimitBytes: 64 * MiB}}, KernelPeakBytes: 68419584}
	if got := OwnMemoryAt(thrash); got != "its own container at its memory limit" {
		t.Errorf("its kernel peak at its limit: %q", got)
	}
	thrash.KernelPeakBytes = 40 * MiB
	if got := OwnMemoryAt(thrash); got != "" {
		t.Errorf("its kernel peak well under its limit: %q", got)
	}
}

// Another trial of the run at its own memory limit beside this one: the
// host's memory pressure is its stalls too, not counted as the host's (a
// sleeping trial was "contended, memory pressure 20%" beside one
// re-reading its page cache at 64 MiB, the twenty-fourth attacker's 1).
func TestNeighbourAtItsLimitIsNotTheHostsPressure(t *testing.T) {
	n := HostNoise{PSI: true, MemorySome: 0.20, StepTime: Duration(20 * time.Second), CPUWait: Duration(6 * time.Millisecond), CPUWaitKnown: true,
		NeighbourMemory: "trial t0001 of this run at its memory limit beside it"}
	n.Judge(HostLoad{}, HostLoad{}, 2)
	if n.Contended || !strings.Contains(n.Own, "memory pressure 20% while trial t0001 of this run at its memory limit beside it, not the host's") {
		t.Errorf("contended %v (%s), own %q", n.Contended, n.Why, n.Own)
	}
	n.NeighbourMemory = ""
	n.Judge(HostLoad{}, HostLoad{}, 2)
	if !n.Contended || n.Why != "memory pressure 20%" {
		t.Errorf("no trial at its limit beside it: contended %v (%s)", n.Contended, n.Why)
	}
}
