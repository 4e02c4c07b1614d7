package model

import "time"

// Phases a step runs in.
const (
	PhaseInstall  = "install"
	PhaseAgent    = "agent"
	PhaseVerifier = "verifier"
)

// Activity is a process a step started that lived long enough to be seen
// (a traced command's children: the agent's own `pip install`, `pytest`).
type Activity struct {
	Step    string    `json:"step"`
	PID     int       `json:"pid"`
	PPID    int       `json:"ppid,omitempty"`
	Command string    `json:"command"` // full command line, redacted
	Start   time.Time `json:"start"`
	End     time.Time `json:"end,omitempty"` // zero while it runs
	// ExitCode is known only for what the runner itself waited on; a
	// process killed by the kernel is marked OOMKilled instead.
	ExitCode     *int  `json:"exit_code,omitempty"`
	OOMKilled    bool  `json:"oom_killed,omitempty"`
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
}

// Duration is how long the activity ran (so far, while it runs).
func (a Activity) Duration(now time.Time) time.Duration {
	if a.End.IsZero() {
		return now.Sub(a.Start)
	}
	return a.End.Sub(a.Start)
}

// ProcessInfo is one process of a container's tree at one sample.
type ProcessInfo struct {
	PID      int    `json:"pid"`
	PPID     int    `json:"ppid"`
	Command  string `json:"command"` // redacted
	RSSBytes int64  `json:"rss_bytes"`
}

// PhaseSummary is the time and memory of one phase of a trial (an
// installed agent's install, apart from its solving).
type PhaseSummary struct {
	Duration            Duration `json:"duration"`
	PeakWorkingSetBytes int64    `json:"peak_working_set_bytes"`
	Steps               int      `json:"steps"`
	OOMKills            int      `json:"oom_kills,omitempty"`
}

// SummarizePhase adds up a phase's steps; ok is false when none ran.
func SummarizePhase(steps []StepResult, phase string) (PhaseSummary, bool) {
	var p PhaseSummary
	for _, s := range steps {
		if s.Phase != phase {
			continue
		}
		p.Steps++
		p.Duration += Duration(s.Duration())
		p.PeakWorkingSetBytes = max(p.PeakWorkingSetBytes, s.PeakWorkingSetBytes)
		p.OOMKills += s.OOMKills
	}
	return p, p.Steps > 0
}
