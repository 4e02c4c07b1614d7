// Package event holds the typed stream every face consumes: the runner
// emits it, the console, the headless command and the store read it,
// whatever backend ran the trials.
package event

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

// TrialCreating: admission let the trial in and its container is being
// created (an image to unpack, a sandbox to start): it runs from now on,
// before TrialStarted says the container is up.
type TrialCreating struct {
	Base
}

// TrialStarted: the container is up.
type TrialStarted struct {
	Base
	ContainerID  string
	Image        string
	SampleSource string
}

// TrialStopped: the trial's container is dead and its place among the
// trials at once is free (the next may start); its removal and record go
// on, and TrialEnded follows.
type TrialStopped struct {
	Base
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
	// Live: a line of a step printing fast, past its head, sent to be
	// seen as it comes; the step's tail is sent again when it ends, and
	// the log keeps that (model.LogStepHeadBytes).
	Live bool
	// Skipped and SkippedBytes count the step's lines before this one
	// that were never sent: neither its head nor its tail.
	Skipped      int
	SkippedBytes int64
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
	// Why says what stopped it when headroom did (the platform gone), ""
	// when it was cancelled or ran to the end.
	Why string `json:",omitempty"`
	// NotKept says why the sweep's records could not be kept (its
	// directory removed or moved, the disk full), "" when they were:
	// the store stopped the sweep, and where the records went is here.
	NotKept string `json:",omitempty"`
}

// Sample is one reading of a sandbox's resource use.
type Sample struct {
	Time            time.Time
	UsageBytes      int64 // everything charged, cache included
	WorkingSetBytes int64 // usage minus inactive file cache
	// PeakBytes is the kernel's high-water mark of usage since the
	// previous sample where it is read and reset at every sample
	// (model.TrialResult.PeakMode "kernel-reset"), else 0: a spike
	// between two samples is in the later one's PeakBytes.
	PeakBytes int64
	// StepPeakBytes is the part of PeakBytes that is the running step's
	// own: PeakBytes's interval may straddle a step's boundary, whose
	// mark before it the closed step's reading took (cgroup.Reading).
	StepPeakBytes int64
	CacheBytes    int64 // usage minus working set
	CPUCores      float64
	// ShmemBytes is the cgroup's tmpfs pages (a /dev/shm, any tmpfs),
	// part of the working set no process's resident set counts; 0 where
	// not read.
	ShmemBytes int64
	// MajorFaults is the cgroup's cumulative count of major page faults
	// (0 where not readable): a climbing rate at the limit is a stall.
	MajorFaults int64
	// CPU is the cgroup's cumulative CPU accounting (zero where the
	// source has none): a window's throttled share is the difference of
	// two samples' (model.CPUUse.Sub).
	CPU model.CPUUse
	// CPUWaitNanos is the container's threads' CPU wait so far (the
	// backend's runner.CPUWaiter reading), where CPUWaitRead: read with
	// this sample about once a second, so that the wait is divided
	// between the host and the trial interval by interval.
	CPUWaitNanos int64
	CPUWaitRead  bool
}

// ActivityStarted: a process has lived past the threshold (sent again,
// same PID and Start, when an exec changes its command); it belongs to
// the step running then (a traced command's trace line can trail its
// process by a sample, so not the step running when it was first seen).
type ActivityStarted struct {
	Base
	Activity model.Activity
}

// ActivityEnded: an activity's process is gone (or the trial ended).
type ActivityEnded struct {
	Base
	Activity model.Activity
}
