package ui

import (
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// LaunchSpec is a sweep the console asks for.
type LaunchSpec struct {
	Tasks  []model.Task
	Agents []string
	Ratios []model.Ratio
	// Scale is what the ratios limit (run's --scale; empty: both).
	Scale model.Scale
	// Axes are the other knobs swept (run's knob flags).
	Axes        []model.Axis
	Repeats     int
	Concurrency int
	Seed        uint64
	// OnlyRepeat replays one repeat exactly (rerun of a trial).
	OnlyRepeat int
	// Label says why the sweep exists ("focus", "rerun t0003").
	Label string
}

// Sweep is a running sweep as the console sees it.
type Sweep interface {
	ID() string
	Dir() string
	Plan() model.Plan
	Events() <-chan event.Event
	StopTrial(id string) bool
	Cancel()
}

// HostStat is the host's load, shown because a loaded host is noise.
type HostStat struct {
	MemTotal, MemAvailable int64
	CPUPercent             float64
}

// Experiment is a past experiment in the store, for the history screen.
type Experiment struct {
	ID, Dir, Status string
	Created         string
	Trials          int
	// What was run: task names, ratios, repeats (from the manifest).
	Tasks   []string
	Ratios  []model.Ratio
	Repeats int
	// Concurrency is how many trials it ran at once: a resume runs as
	// many, and lays its cards out as the run did.
	Concurrency int
	// Images are the tasks' images by name (the manifest's): a task whose
	// image is the seeded workload's replays a repeat at every ratio, so
	// its trials pair by repeat, as the report pairs them.
	Images map[string]string
	// Typos are, by task name, what a suspected typo in its file did to
	// its trials (model.TypoNote, from the manifest).
	Typos map[string]string
	// Load reads the experiment's trials as their summaries have them
	// (store.Summarize: what the matrix, cards, focus and what-if use).
	Load func() (model.Plan, []model.TrialResult, error)
	// Record reads one trial's record, for its detail (nil: the
	// summary's is all there is).
	Record func(trialID string) (model.TrialResult, error)
	// Trace reads one trial's memory samples and log.
	Trace func(trialID string) ([]event.Sample, []string, error)
}
