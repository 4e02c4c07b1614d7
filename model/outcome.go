package model

// Outcome is how a trial ended: exactly one of the constants below.
type Outcome string

const (
	// Passed: the verifier passed and nothing was OOM-killed.
	Passed Outcome = "passed"
	// PassedAfterOOM: the verifier passed although some process was
	// OOM-killed. Counted as a pass, flagged.
	PassedAfterOOM Outcome = "passed-after-oom"
	// OOMKilled: an OOM kill happened and the trial did not pass.
	OOMKilled Outcome = "oom-killed"
	// Failed: the verifier failed with no OOM kill and no timeout.
	Failed Outcome = "failed"
	// Timeout: the agent or the verifier ran past its time limit.
	Timeout Outcome = "timeout"
	// InfraError: the container could not be created or started, the
	// engine failed, or the image was missing.
	InfraError Outcome = "infra-error"
	// Cancelled: the user stopped the trial or the sweep.
	Cancelled Outcome = "cancelled"
)

// Outcomes lists every outcome in display order.
var Outcomes = []Outcome{Passed, PassedAfterOOM, OOMKilled, Failed, Timeout, InfraError, Cancelled}

// Success says whether the outcome counts as a pass.
func (o Outcome) Success() bool { return o == Passed || o == PassedAfterOOM }

// InfraFailure says whether the outcome is an infrastructure error in the
// brief's sense: the machine, not the model, ended the trial.
func (o Outcome) InfraFailure() bool { return o == OOMKilled || o == InfraError }

// Counted says whether the outcome enters rates; cancelled trials say
// nothing about the task or the machine.
func (o Outcome) Counted() bool { return o != Cancelled && o != "" }

// Evidence is what the runner observed about a trial.
type Evidence struct {
	InfraFailed    bool // container create/start/engine failure
	Cancelled      bool
	OOMKills       int  // kills seen by any signal
	TimedOut       bool // agent or verifier deadline passed
	VerifierPassed bool // verifier ran and passed

	// What the attribution needs (see Attribute).
	TimedOutPhase string // "agent" or "verifier", when TimedOut
	// OOMOutside: the kills came while the container was under its own
	// limit (or it had none): a parent cgroup's or the host's doing.
	OOMOutside bool
	// KilledBy names the signal someone other than headroom sent the
	// container (docker kill, stop, rm -f); empty when nobody did.
	KilledBy string
	// EngineLost: the engine went away under the trial.
	EngineLost bool
	// PidsLimitHits counts forks the pids controller refused.
	PidsLimitHits int
	// DiskFull: a step reported ENOSPC.
	DiskFull bool
	// Stalled: the timed-out step spent most of its time at the limit.
	Stalled bool
}

// Classify turns evidence into exactly one outcome. The order matters: a
// kill from outside, an infrastructure failure or a cancellation says
// nothing about the verifier; a pass is a pass even after a kill (flagged);
// a kill under the container's own limit is the outside's doing (an infra
// error, not the ratio's); a kill outranks a timeout because the kill is
// what the machine did.
func Classify(e Evidence) Outcome {
	switch {
	case e.KilledBy != "" && !e.Cancelled:
		return InfraError
	case e.InfraFailed:
		return InfraError
	case e.Cancelled:
		return Cancelled
	case e.VerifierPassed && e.OOMKills > 0:
		return PassedAfterOOM
	case e.VerifierPassed:
		return Passed
	case e.OOMKills > 0 && e.OOMOutside:
		return InfraError
	case e.OOMKills > 0:
		return OOMKilled
	case e.TimedOut:
		return Timeout
	default:
		return Failed
	}
}

// Attribute names the cause behind the outcome Classify gives, in the
// same order of precedence: a kill from outside, then the engine, then a
// kill (own limit or outside pressure), then a timeout (a stall at the
// limit before the phase's own), then the pids limit and a full disk
// behind a failure. A pass has no cause but the kill it survived.
func Attribute(e Evidence) Cause {
	switch {
	case e.KilledBy != "" && !e.Cancelled:
		return CauseKilledOutside
	case e.InfraFailed:
		if e.EngineLost {
			return CauseEngineLost
		}
		return CauseNone
	case e.Cancelled:
		return CauseNone
	case e.OOMKills > 0 && e.OOMOutside:
		return CauseOutsidePressure
	case e.OOMKills > 0:
		return CauseOwnLimit
	case e.VerifierPassed:
		return CauseNone
	case e.TimedOut && e.Stalled:
		return CauseStalled
	case e.TimedOut && e.TimedOutPhase == "verifier":
		return CauseVerifierTimeout
	case e.TimedOut:
		return CauseAgentTimeout
	case e.PidsLimitHits > 0:
		return CausePidsLimit
	case e.DiskFull:
		return CauseDiskFull
	}
	return CauseNone
}

// Rates are the two headline numbers over a set of outcomes.
type Rates struct {
	Counted   int // outcomes that enter the rates (all but cancelled)
	Successes int
	InfraErrs int
	// OutsideErrs are the infra errors from outside the container and its
	// limits (Cause.Outside): in InfraErrs, and shown apart.
	OutsideErrs int
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
	if o.Success() {
		r.Successes++
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

// InfraErrorRate is (oom-killed + infra-error) / counted.
func (r Rates) InfraErrorRate() float64 { return ratio(r.InfraErrs, r.Counted) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
