package runner

import (
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Event is one thing that happened during a sweep. Every event names its
// trial (empty for sweep-wide events) and when it happened.
type Event interface {
	TrialID() string
	At() time.Time
}

// Base is embedded by every event.
type Base struct {
	Trial string
	Time  time.Time
}

// TrialID names the trial the event belongs to.
func (b Base) TrialID() string { return b.Trial }

// At is when the event happened.
func (b Base) At() time.Time { return b.Time }

// SweepStarted opens the stream.
type SweepStarted struct {
	Base
	Plan model.Plan
}

// TrialQueued: the trial is planned and waiting to start.
type TrialQueued struct {
	Base
	Trial model.Trial
}

// TrialWaiting: the trial could start but admission control holds it.
type TrialWaiting struct {
	Base
	Reason string
}

// TrialStarted: the container is up.
type TrialStarted struct {
	Base
	ContainerID  string
	Image        string
	SampleSource string
}

// StepStarted: a step began.
type StepStarted struct {
	Base
	Index int
	Phase string // "agent" or "verifier"
	Step  model.Step
}

// OutputLine is one line a step printed.
type OutputLine struct {
	Base
	Step   string
	Stream string // "stdout" or "stderr"
	Text   string
}

// MemorySample is one reading of the container's memory and CPU.
type MemorySample struct {
	Base
	Sample
}

// OOMKill: the kernel killed a process in the trial's container.
type OOMKill struct {
	Base
	OOM model.OOMEvent
	// LimitBytes is the hard limit in force (0: uncapped).
	LimitBytes int64
	// Detail marks not a new kill but the last one again, now with what
	// the kernel's log says was killed (it can trail the engine's event).
	Detail bool
}

// StepEnded: a step finished.
type StepEnded struct {
	Base
	Result model.StepResult
}

// TrialEnded carries the trial's durable record.
type TrialEnded struct {
	Base
	Result model.TrialResult
}

// SweepEnded closes the stream. Interrupted is set when the sweep was
// cancelled before every trial ran.
type SweepEnded struct {
	Base
	Interrupted bool
}
