package model

// Outcome is how a trial ended: exactly one of the constants below. Its
// success is the harness's verdict (the verifier's reward or parser, as
// Harbor or terminal-bench grades the same container state); the other
// outcomes and the trial's Cause say what happened on the way.
type Outcome string

const (
	// Passed: the verifier passed, nothing was OOM-killed and the agent
	// kept to its time limit.
	Passed Outcome = "passed"
	// PassedAfterOOM: the verifier passed although some process was
	// OOM-killed. Counted as a pass, flagged.
	PassedAfterOOM Outcome = "passed-after-oom"
	// PassedAfterTimeout: the agent ran past its time limit, and the
	// verifier, run after it as Harbor and terminal-bench run it, passed.
	// Counted as a pass (its harness's verdict), flagged; its Cause says
	// whether a stall at the limit or a pause (frozen) made it time out.
	PassedAfterTimeout Outcome = "passed-after-timeout"
	// OOMKilled: the kernel OOM-killed a process at the trial's own limit
	// and the trial did not pass (a kill under its limit, the host's
	// pressure, is an InfraError with CauseOutsidePressure).
	OOMKilled Outcome = "oom-killed"
	// Failed: the verifier failed with no OOM kill and no timeout; its
	// Cause names the pids limit or a full disk when either was hit. A
	// task's own container ending under its steps is a Failed too.
	Failed Outcome = "failed"
	// Timeout: the agent or the verifier ran past its time limit and the
	// trial did not pass; its Cause says whose limit, or that it stalled at
	// the memory limit (a container frozen until its time ran out is an
	// InfraError with CauseFrozen).
	Timeout Outcome = "timeout"
	// InfraError: the machine, not the model, ended the trial: the
	// container could not be created or started, the image was missing,
	// the engine failed or went away, something outside killed the
	// container or changed its limit, an OOM kill came under its own
	// limit, or it was frozen until its time ran out (Cause says which).
	InfraError Outcome = "infra-error"
	// Cancelled: the user stopped the trial or the sweep (and nothing
	// above made it an InfraError first).
	Cancelled Outcome = "cancelled"
)

// Tone is the fixed meaning an outcome's colour carries in every theme
// (themes maps each to a style).
type Tone string

const (
	ToneOK     Tone = "ok"
	ToneWarn   Tone = "warn"
	ToneOOM    Tone = "oom"
	ToneDanger Tone = "danger"
	ToneMuted  Tone = "muted"
)

// OutcomeSpec is everything an outcome means, in one row: its mark in a
// matrix cell, its legend, its colour's meaning, and how it counts.
type OutcomeSpec struct {
	Outcome Outcome
	Glyph   string
	Legend  string
	Tone    Tone
	// Success: a pass by the harness's verdict.
	Success bool
	// Infra: an infrastructure error in the study's sense (the machine,
	// not the model, ended the trial).
	Infra bool
	// Counted: enters rates (a cancelled trial says nothing).
	Counted bool
}

// OutcomeTable lists every outcome, in display order.
var OutcomeTable = []OutcomeSpec{
	{Passed, "+", "passed", ToneOK, true, false, true},
	{PassedAfterOOM, "!", "passed after an OOM kill", ToneWarn, true, false, true},
	{PassedAfterTimeout, "t", "passed after the agent ran past its time limit (graded, as its harness grades it)", ToneWarn, true, false, true},
	{OOMKilled, "K", "OOM-killed at its own limit", ToneOOM, false, true, true},
	{Failed, "x", "failed: the verifier said no (no kill, no timeout)", ToneDanger, false, false, true},
	{Timeout, "T", "timed out (the agent's or the verifier's time limit)", ToneWarn, false, false, true},
	{InfraError, "E", "infrastructure error", ToneDanger, false, true, true},
	{Cancelled, "-", "cancelled", ToneMuted, false, false, false},
}

// Outcomes lists every outcome in display order.
var Outcomes = func() []Outcome {
	out := make([]Outcome, len(OutcomeTable))
	for i, s := range OutcomeTable {
		out[i] = s.Outcome
	}
	return out
}()

// Spec is the outcome's row of OutcomeTable (an unknown outcome's: "?",
// muted, not counted).
func (o Outcome) Spec() OutcomeSpec {
	for _, s := range OutcomeTable {
		if s.Outcome == o {
			return s
		}
	}
	return OutcomeSpec{Outcome: o, Glyph: "?", Legend: string(o), Tone: ToneMuted}
}

// Success says whether the outcome counts as a pass.
func (o Outcome) Success() bool { return o.Spec().Success }

// InfraFailure says whether the outcome is an infrastructure error: the
// machine, not the model, ended the trial (Anthropic's infrastructure-noise
// study counts these apart from the model's failures).
func (o Outcome) InfraFailure() bool { return o.Spec().Infra }

// Counted says whether the outcome enters rates; cancelled trials say
// nothing about the task or the machine.
func (o Outcome) Counted() bool { return o.Spec().Counted }

// Glyph is the one-character ASCII mark of an outcome in compact views.
func (o Outcome) Glyph() string { return o.Spec().Glyph }

// LegendEntry is the outcome's glyph and what it means, as a matrix's
// legend says it ("x failed: the verifier said no (…)"): a glyph the
// legend only named ("x failed") left a new user to guess why.
func (o Outcome) LegendEntry() string { return o.Glyph() + " " + o.Spec().Legend }

// Tone is the meaning of the outcome's colour.
func (o Outcome) Tone() Tone { return o.Spec().Tone }

// Witness is what was seen of something that happened to a trial, in
// the words of whoever saw it (the engine's event, the cgroup, the
// kernel): "SIGKILL", "128MiB to 256MiB", "its main process `sleep 4`
// ended, exit 0". Empty when nothing was seen; Seen says which, so that
// no one reads a string as a boolean.
type Witness string

// Seen says whether it happened.
func (w Witness) Seen() bool { return w != "" }

// Evidence is what the runner observed about a trial.
type Evidence struct {
	InfraFailed    bool // container create/start/engine failure
	Cancelled      bool
	OOMKills       int  // kills seen by any signal
	TimedOut       bool // agent or verifier deadline passed
	VerifierPassed bool // verifier ran and passed

	// What names the cause (see Classify).
	TimedOutPhase string // "agent" or "verifier", when TimedOut
	// The kernel's own evidence of whose limit a kill was: the trial's
	// hard limit (0: none), the kernel's highest usage over its steps
	// (read from the cgroup, not the samples), and how often the cgroup's
	// usage hit that limit (failcnt, memory.events max), when known.
	LimitBytes      int64
	KernelPeakBytes int64
	LimitHits       int64
	LimitHitsKnown  bool
	// KilledBy names the signal someone other than headroom sent the
	// container (docker kill, stop, rm -f); empty when nobody did.
	KilledBy Witness
	// EngineLost: the engine went away under the trial.
	EngineLost bool
	// ContainerExited says how the trial's container ended by itself
	// (its main process, the idle command or the image's entrypoint,
	// exited: "its main process `sleep 4` ended, exit 0"), by the
	// engine's own word: the engine still answered, no one killed it.
	// The engine refusing the next step is then the task's doing, not
	// an infrastructure failure.
	ContainerExited Witness
	// LimitChanged says how the memory limit the kernel enforced moved
	// away from the trial's while it ran ("128MiB to 256MiB"), when
	// someone else changed it; empty when it held.
	LimitChanged Witness
	// Frozen says how the trial could not run for part of its time (its
	// container paused by someone else, headroom itself stopped), when
	// it was; a timeout then counted time the task never had.
	Frozen Witness
	// PidsLimitHits counts forks the pids controller refused.
	PidsLimitHits int
	// DiskFull: a step reported ENOSPC and the machine confirmed it (a
	// filesystem of its container had no room when the step ended,
	// FSRoom.Full), or could not look. A task's words alone are not a
	// full disk: printed on a disk with room, the trial is a plain
	// failure (its reason says what it printed).
	DiskFull bool
	// Stall is the timed-out step's memory evidence, when one timed out.
	Stall *StallEvidence
	// DriverKilled: one of the kills took headroom's step driver
	// (OOMEvent.Driver), ending the container under the trial.
	DriverKilled bool
}

// OwnLimitSlackBytes is how far under its limit the kernel's peak can
// stop when a charge at the limit fails: the kernel charges in batches
// (64 pages), and on Kubernetes the pod's cgroup, whose limit also covers
// the pause process, refuses the charge ~460 KiB short of the container's.
const OwnLimitSlackBytes = MiB

// KernelAtLimit says whether the kernel's own peak reached the limit.
func (e Evidence) KernelAtLimit() bool {
	return e.LimitBytes > 0 && e.KernelPeakBytes > 0 && e.KernelPeakBytes >= e.LimitBytes-OwnLimitSlackBytes
}

// KilledUnderLimit says whether the trial's kills came from outside its
// own limit, by the kernel's own evidence: it had no limit, or its usage
// never hit the limit (the hit counters say none, and the kernel's peak
// stayed under it). The samples alone never decide: a loaded host's
// sampler can miss the last half-second before a kill.
func (e Evidence) KilledUnderLimit() bool {
	switch {
	case e.LimitBytes == 0:
		return true
	case e.KernelAtLimit():
		return false
	}
	return e.LimitHitsKnown && e.LimitHits == 0
}

// Classify turns evidence into exactly one outcome and its cause, in one
// order of precedence so the two cannot drift: a kill from outside, an
// infrastructure failure (the engine gone) or a cancellation says nothing
// about the verifier; a pass is a pass even after a kill (flagged, with
// the kill's cause); a kill under the container's own limit is the
// outside's doing (an infra error, not the ratio's); a kill outranks a
// timeout because the kill is what the machine did; a timeout is a stall
// when the step sat at its limit (StallEvidence.Judge), else its phase's;
// the pids limit and a full disk are named behind a failure.
func Classify(e Evidence) (Outcome, Cause) {
	if e.ContainerExited.Seen() && !e.KilledBy.Seen() {
		// The task's own container ended under its steps: a failure of
		// the task (a plain failure at every ratio alike), not the
		// engine's and not a cause the machine is charged with.
		e.InfraFailed, e.EngineLost = false, false
	}
	switch {
	case e.KilledBy.Seen() && !e.Cancelled:
		return InfraError, CauseKilledOutside
	case e.LimitChanged.Seen() && !e.Cancelled:
		// Whatever it did next, it did under a limit its ratio does not
		// say: not evidence for that ratio, a pass included.
		return InfraError, CauseLimitChanged
	case e.DriverKilled && !e.VerifierPassed && !e.Cancelled:
		// Not the engine gone, and not the task's verdict: headroom's
		// own process went with the kill, and the verifier never ran.
		return InfraError, CauseDriverKilled
	case e.InfraFailed && e.EngineLost:
		return InfraError, CauseEngineLost
	case e.InfraFailed:
		return InfraError, CauseNone
	case e.Cancelled:
		return Cancelled, CauseNone
	}
	killCause := CauseOwnLimit
	if e.OOMKills > 0 && e.KilledUnderLimit() {
		killCause = CauseOutsidePressure
	}
	switch {
	case e.VerifierPassed && e.OOMKills > 0:
		return PassedAfterOOM, killCause
	case e.VerifierPassed && e.TimedOut && e.TimedOutPhase != "verifier":
		// Harbor and terminal-bench grade the container the timed-out
		// agent left: its reward stands. What ran it out of time is named.
		switch {
		case e.Frozen.Seen():
			return PassedAfterTimeout, CauseFrozen
		case e.Stall != nil && e.Stall.Judge():
			return PassedAfterTimeout, CauseStalled
		}
		return PassedAfterTimeout, CauseAgentTimeout
	case e.VerifierPassed:
		return Passed, CauseNone
	case e.OOMKills > 0 && killCause == CauseOutsidePressure:
		return InfraError, CauseOutsidePressure
	case e.OOMKills > 0:
		return OOMKilled, CauseOwnLimit
	case e.TimedOut && e.Frozen.Seen():
		return InfraError, CauseFrozen
	case e.TimedOut && e.Stall != nil && e.Stall.Judge():
		return Timeout, CauseStalled
	case e.TimedOut && e.TimedOutPhase == "verifier":
		return Timeout, CauseVerifierTimeout
	case e.TimedOut:
		return Timeout, CauseAgentTimeout
	case e.PidsLimitHits > 0:
		return Failed, CausePidsLimit
	case e.DiskFull:
		return Failed, CauseDiskFull
	}
	return Failed, CauseNone
}

// Rates are the two headline numbers over a set of outcomes.
type Rates struct {
	Counted   int // outcomes that enter the rates (all but cancelled)
	Successes int
	InfraErrs int
	// OutsideErrs are the infra errors from outside the container and its
	// limits (Cause.Outside): in InfraErrs, and shown apart.
	OutsideErrs int
	// Memory counts the memory failures (killed at the own limit, stalled
	// at it) among the counted outcomes, split.
	Memory MemoryFailures
	// AfterTimeout counts the passes whose agent ran past its time limit
	// (in Successes): graded as the harness grades them, shown apart.
	AfterTimeout int
	// AfterOOM counts the passes after a process of the trial was
	// OOM-killed at its limit (in Successes): no failure, but a kill.
	AfterOOM int
}

// Add records one outcome with no cause.
func (r *Rates) Add(o Outcome) { r.AddCause(o, CauseNone) }

// AddCause records one outcome and its cause: a cause that is the
// machine's doing counts as an infra error whatever the outcome.
func (r *Rates) AddCause(o Outcome, c Cause) {
	if !o.Counted() {
		return
	}
	r.Counted++
	r.Memory.Add(o, c)
	if o.Success() {
		r.Successes++
	}
	if o == PassedAfterTimeout {
		r.AfterTimeout++
	}
	if o == PassedAfterOOM {
		r.AfterOOM++
	}
	if o.InfraFailure() || (c.Infra() && !o.Success()) {
		r.InfraErrs++
		if c.Outside() {
			r.OutsideErrs++
		}
	}
}

// SuccessRate is successes / counted (NaN-free: 0 when nothing counted).
func (r Rates) SuccessRate() float64 { return ratio(r.Successes, r.Counted) }

// OwnFailures are the counted trials that neither passed nor were an
// infra error: the task's own failures (x, T), so that successes, infra
// errors and these add up to Counted.
func (r Rates) OwnFailures() int { return r.Counted - r.Successes - r.InfraErrs }

// InfraErrorRate is (oom-killed + infra-error) / counted.
func (r Rates) InfraErrorRate() float64 { return ratio(r.InfraErrs, r.Counted) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
