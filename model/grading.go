package model

// gradingDeviations are where headroom's verdict on a trial of t differs
// from its own harness's on the same container state. Harbor's Trial.run
// (trial/trial.py) catches AgentTimeoutError and runs the verifier, and
// terminal-bench parses the tests' output after an agent timeout too; a
// plain (single-phase) task here records the timeout without running the
// verifier, where a multi-step task's phases are graded. Issue #33's one
// trial flow grades a timed-out agent's work; this goes with it.
func (t *Task) gradingDeviations() []Deviation {
	if !t.ForeignHarness() || len(t.Phases) > 0 {
		return nil
	}
	return []Deviation{{"timed-out agent not graded",
		"after the agent's time limit headroom records timeout without running the verifier; its harness verifies the container as the agent left it, so work finished before the limit passes there"}}
}
