package model

import "fmt"

// ReplayRecord is what a replayed trial did against the recording it
// replayed: another harness's trial whose recorded actions ran again, in
// order, in the task's own container under this trial's ratio. Pure facts
// and their comparison; headroom's replay package makes it.
type ReplayRecord struct {
	// Source names the recording: "harbor JOB/TRIAL" or
	// "terminal-bench RUN/TRIAL".
	Source string `json:"source"`
	// Actions is how many recorded actions the replay has.
	Actions int `json:"actions"`
	// RecordedOutcome is the recording's own verdict ("passed",
	// "failed", "" when its harness did not say).
	RecordedOutcome string `json:"recorded_outcome,omitempty"`
	// Ran is how many actions ran here (fewer when the agent's time ran
	// out or the trial stopped).
	Ran int `json:"ran"`
	// Divergence is the first action where this run and the recording
	// parted (nil: none seen).
	Divergence *Divergence `json:"divergence,omitempty"`
	// Similarity is each action's output here against the recording's,
	// 0..1 (-1 where the recording kept no output), in order.
	Similarity []float64 `json:"similarity,omitempty"`
	// ThinkCapped says which recorded gaps between actions were longer
	// than the agent's own time limit and replayed cut to it ("" when
	// none was).
	ThinkCapped string `json:"think_capped,omitempty"`
}

// Divergence is one action where a replay parted from its recording.
type Divergence struct {
	// Action is 1-based, of ReplayRecord.Actions.
	Action  int    `json:"action"`
	Command string `json:"command"`
	// Kind is what parted: DivergedOOM, DivergedTimeout, DivergedExit,
	// DivergedTerminal, DivergedOutput, DivergedNotRun.
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// How a replayed action can part from its recording, worst first.
const (
	DivergedOOM      = "oom-killed"
	DivergedTimeout  = "timed-out"
	DivergedTerminal = "terminal-gone"
	DivergedExit     = "exit-status"
	DivergedOutput   = "output"
	DivergedNotRun   = "not-run"
)

// Sentence is the divergence as the record, the trial detail and the
// report say it: "diverged at action 14/52 `pip install torch`:
// OOM-killed at 1x (…); the recording continued".
func (r ReplayRecord) Sentence(ratio string) string {
	d := r.Divergence
	if d == nil {
		return fmt.Sprintf("followed the recording: %d/%d actions ran, none diverged", r.Ran, r.Actions)
	}
	after := "the recording continued"
	if d.Action >= r.Actions {
		after = "the recording's last action"
	}
	return fmt.Sprintf("diverged at action %d/%d `%s`: %s at %s; %s", d.Action, r.Actions, d.Command, d.Detail, ratio, after)
}

// Replayed says whether the trial ran a recorded session's actions: its
// repeats replay by construction (the same actions each time), so they
// pair as a seeded task's do.
func (r TrialResult) Replayed() bool { return r.Replay != nil }
