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
}

// Classify turns evidence into exactly one outcome. The order matters: an
// infrastructure failure or a cancellation says nothing about the verifier;
// a pass is a pass even after a kill (flagged); a kill outranks a timeout
// because the kill is what the machine did.
func Classify(e Evidence) Outcome {
	switch {
	case e.InfraFailed:
		return InfraError
	case e.Cancelled:
		return Cancelled
	case e.VerifierPassed && e.OOMKills > 0:
		return PassedAfterOOM
	case e.VerifierPassed:
		return Passed
	case e.OOMKills > 0:
		return OOMKilled
	case e.TimedOut:
		return Timeout
	default:
		return Failed
	}
}

// Rates are the two headline numbers over a set of outcomes.
type Rates struct {
	Counted   int // outcomes that enter the rates (all but cancelled)
	Successes int
	InfraErrs int
}

// Add records one outcome.
func (r *Rates) Add(o Outcome) {
	if !o.Counted() {
		return
	}
	r.Counted++
	if o.Success() {
		r.Successes++
	}
	if o.InfraFailure() {
		r.InfraErrs++
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
