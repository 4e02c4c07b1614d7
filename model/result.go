package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// StepResult is what one step did.
type StepResult struct {
	Name     string    `json:"name"`
	Show     string    `json:"show"`
	Phase    string    `json:"phase"` // "agent" or "verifier"
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	ExitCode int       `json:"exit_code"`
	// ExitUnknown, when set, says why the step's own exit status is not
	// known (ExitCode is then -1): a traced script's shell did not report
	// it. Never a guessed 0.
	ExitUnknown string `json:"exit_unknown,omitempty"`
	// PipeStatus is a traced pipeline's commands' statuses, in order,
	// when they differ (ExitCode is the pipeline's own).
	PipeStatus []int `json:"pipe_status,omitempty"`
	// PeakWorkingSetBytes is the highest sampled working set (usage minus
	// inactive file cache) while the step ran.
	PeakWorkingSetBytes int64 `json:"peak_working_set_bytes"`
	// KernelPeakBytes is the kernel's own high-water mark of usage
	// (including cache) for the step, when it could be read; 0 otherwise.
	KernelPeakBytes int64 `json:"kernel_peak_bytes,omitempty"`
	// KernelPeakNoCacheBytes is the kernel's mark less the reclaimable
	// cache (inactive file) the samples saw about it: the need that
	// catches a spike between samples without counting cache the kernel
	// reclaims before it kills (KernelPeakNoCache). 0 where unknown
	// (records made before it was kept, no mark, no samples).
	KernelPeakNoCacheBytes int64 `json:"kernel_peak_no_cache_bytes,omitempty"`
	OOMKills               int   `json:"oom_kills,omitempty"`
	// LeftoverRSSBytes is the most resident memory, at one sample while
	// the step ran, of processes not its own: those earlier steps left
	// running (an agent's nohup'd child during the verifier) and those
	// the container's entrypoint started before any step (the task's
	// environment: a service, a background job): in its peaks, not its
	// own. LeftoverFrom names the largest of them and whose it is (the
	// step it came from, or "started by the container's
	// entrypoint").
	LeftoverRSSBytes int64  `json:"leftover_rss_bytes,omitempty"`
	LeftoverFrom     string `json:"leftover_from,omitempty"`
	// CPU is the step's CPU time and throttling, when the cgroup's
	// counters could be read.
	CPU      *CPUUse `json:"cpu,omitempty"`
	TimedOut bool    `json:"timed_out,omitempty"`
	// AtLimit is how long the step was at its hard limit (model.AtLimit);
	// MajorFaults the cgroup's major page
	// faults during the step (the kernel re-reading evicted pages), and
	// MajorFaultsAtLimit those of the sample intervals AtLimit sums (nil
	// where not counted): a stall's rate (StallEvidence).
	AtLimit            Duration `json:"at_limit,omitempty"`
	MajorFaults        int64    `json:"major_faults,omitempty"`
	MajorFaultsAtLimit *int64   `json:"major_faults_at_limit,omitempty"`
	// CPUWait is the CPU time the step's threads wanted and the host did
	// not give them, when read: what they waited behind the trial's own
	// CPU limit and its own threads is not counted (SplitCPUWait).
	CPUWait Duration `json:"cpu_wait,omitempty"`
	// NoSpace: the step's output reported ENOSPC.
	NoSpace bool `json:"no_space,omitempty"`
	// Container names the container the step ran in when it is not the
	// trial's ("verifier": a separate verifier's own, of its own
	// resources). Its memory is that container's, recorded beside the
	// trial's (TrialResult.Sidecars), not the step's: it was never under
	// the trial's limit, so its peaks here are 0.
	Container string `json:"container,omitempty"`
	// Output is the step's output as kept: its first lines and its last
	// (a line saying what was left out between them), each line cut at
	// 2,000 bytes, and no more than the trial's share (runner's
	// TrialOutputBytes). OutputDropped and OutputDroppedBytes count what
	// was not kept; the trial's log.txt keeps more (store's caps).
	Output             string `json:"output,omitempty" printable:"text"`
	OutputDropped      int    `json:"output_dropped_lines,omitempty"`
	OutputDroppedBytes int64  `json:"output_dropped_bytes,omitempty"`
	// Folded, on the step that stands for a traced script's commands not
	// kept as steps (those past its first and before its last, runner's
	// TracedHeadSteps and TracedTailSteps), counts them by command name.
	Folded []FoldedCommands `json:"folded,omitempty"`
}

// FoldedCommands are a traced script's runs of one command (its first
// word) not kept as steps: how many, their time, how many exited
// non-zero, and the highest sampled working set while one ran.
type FoldedCommands struct {
	Command             string   `json:"command"`
	Count               int      `json:"count"`
	Time                Duration `json:"time"`
	Failures            int      `json:"failures,omitempty"`
	PeakWorkingSetBytes int64    `json:"peak_working_set_bytes,omitempty"`
}

// Failed says whether the step is known to have exited non-zero.
func (s StepResult) Failed() bool { return s.ExitUnknown == "" && s.ExitCode != 0 }

// ExitText is the exit status as tables show it: "?" when unknown.
func (s StepResult) ExitText() string {
	if s.ExitUnknown != "" {
		return "?"
	}
	if len(s.PipeStatus) > 0 {
		parts := make([]string, len(s.PipeStatus))
		for i, c := range s.PipeStatus {
			parts[i] = strconv.Itoa(c)
		}
		return strings.Join(parts, "|")
	}
	return strconv.Itoa(s.ExitCode)
}

// Duration is the step's wall time.
func (s StepResult) Duration() time.Duration { return s.End.Sub(s.Start) }

// OOMEvent is one kill as headroom saw it.
type OOMEvent struct {
	At     time.Time `json:"at"`
	Step   string    `json:"step,omitempty"` // the step running when it landed
	Source string    `json:"source"`         // "kernel", "events", "cgroup", "inspect"
	// WorkingSetBytes is the last sampled working set before the kill;
	// ShmemBytes, the tmpfs pages in it then (0 where not read): memory
	// no process's resident set counts (DriverByTmpfs, where the
	// kernel's report was not logged).
	WorkingSetBytes int64 `json:"working_set_bytes"`
	ShmemBytes      int64 `json:"shmem_bytes,omitempty"`
	// KernelUsageBytes is the kernel's own figure for the cgroup's usage
	// at the kill (its log's OOM report), 0 where unknown: the sample
	// above may be up to a period stale (KilledAt).
	KernelUsageBytes int64 `json:"kernel_usage_bytes,omitempty"`
	// KernelShmemBytes is, from the same report, the cgroup's shmem: the
	// tmpfs pages (a /dev/shm, any tmpfs) charged to it, which no
	// process's resident set counts (DriverByTmpfs).
	KernelShmemBytes int64 `json:"kernel_shmem_bytes,omitempty"`
	// Process, PID and RSSBytes say what the kernel killed, when its log
	// could be read.
	Process  string `json:"process,omitempty"`
	PID      int    `json:"pid,omitempty"`
	RSSBytes int64  `json:"rss_bytes,omitempty"`
	// Command is the killed process's full command line (redacted), from
	// the process watcher's last sample; Tree is every process of the
	// container at that sample with its RSS: who held the memory.
	Command string        `json:"command,omitempty"`
	Tree    []ProcessInfo `json:"tree,omitempty"`
	// Driver: the killed process was headroom's step driver (the
	// container's PID 1), not the task's: on cgroup v1 the kernel can
	// take it a few ms after the step's own kill, before that memory is
	// freed, and the container ends with it (CauseDriverKilled).
	Driver bool `json:"driver,omitempty"`
	// RaisedScoreAdj is the killed process's oom_score_adj as the
	// kernel's log gave it at the kill, where that is none headroom ever
	// gives its step driver (ForeignDriverScore); nil otherwise or where
	// unknown. For the driver's kill it says the task raised the driver's
	// score (DriverRaised).
	RaisedScoreAdj *int `json:"raised_oom_score_adj,omitempty"`
	// StartedInStep is the step the killed process was first seen in,
	// when not the step the kill landed in: a process an earlier step
	// left running (an agent's nohup'd child killed during the
	// verifier), killed there but not that step's doing.
	StartedInStep string `json:"started_in_step,omitempty"`
	// Entrypoint: the killed process was started by the container's
	// entrypoint (the image's ENTRYPOINT/CMD, the idle command, or a
	// child of theirs), before any step or since, in the entrypoint's
	// session where steps are execs: the task's environment, killed at
	// the container's limit while a step ran but not that step's doing.
	Entrypoint bool `json:"entrypoint,omitempty"`
}

// The step driver's OOM score adjustments: headroom starts it at
// DriverOOMScoreAdj (the kernel's OOM_SCORE_ADJ_MIN, never chosen) and
// it holds StepOOMScoreAdj only while it forks a step, which inherits it
// (the engine's default for a container's processes).
//
// On an engine that refuses the driver's -1000 the driver keeps the
// engine's default and each step starts raised instead, by the least
// that outweighs the driver's memory (workload.stepRaise), at most
// StepRaisedOOMScoreAdj (the kernel's OOM_SCORE_ADJ_MAX): the kernel takes
// any process of the task before the driver.
const (
	DriverOOMScoreAdj     = -1000
	StepOOMScoreAdj       = 0
	StepRaisedOOMScoreAdj = 1000
)

// StepRunnerDriver is TrialResult.StepRunner of a trial whose steps ran
// under headroom's step driver (runner.StepsByDriver).
const StepRunnerDriver = "driver"

// DriverMemoryBytes is what headroom's step driver, the container's
// first process in place of the harness's idle `sh -c "sleep infinity"`,
// holds in the container's memory beyond that idle command: its anonymous
// memory (the Go runtime, its buffers), measured on the engine 1.12 MiB
// beyond the idle command's during a step. A driven container's limit is
// the ratio's plus this, so that the task's own processes have the whole
// limit, as under the harness (without it a task that fit its limit
// within 1.5 MiB under --exec-steps was killed at 1x under the driver).
// runner/docker's TestDriverMemoryIsItsAllowance measures it.
const DriverMemoryBytes = 1280 << 10

// ForeignDriverScore says whether adj, a killed process's OOM score
// adjustment, is one headroom never gives its step driver, started at
// start: spared (started at DriverOOMScoreAdj), the driver holds that or,
// while it forks a step, StepOOMScoreAdj; unspared (an engine that
// refused to lower it), only the one it started at.
func ForeignDriverScore(adj, start int, spared bool) bool {
	if spared {
		return adj != DriverOOMScoreAdj && adj != StepOOMScoreAdj
	}
	return adj != start
}

// DriverRaised says the kill took headroom's step driver at an OOM score
// adjustment headroom never gives it (RaisedScoreAdj): a process of the
// task (container root may raise any process's) made the driver the OOM
// killer's choice. The kill is then the task's own at its limit, not
// headroom's failure (CauseDriverKilled).
func (o OOMEvent) DriverRaised() bool {
	return o.Driver && o.RaisedScoreAdj != nil
}

// DriverByTmpfs says the kill took headroom's step driver while tmpfs
// pages held at least half the cgroup's usage (KernelShmemBytes, the
// kernel's own report): memory no process's resident set counts, which
// only the task writes (the driver writes no tmpfs), had put the
// container at its limit, and the kernel took the largest process it
// could see, which was the driver. The task's own kill at its limit, as
// the same tmpfs would have had the kernel take a process of the
// harness's (its PID 1 among them): graded so, not rerun.
//
// Where the kernel logged no report of the kill (it logs at most ten in
// five seconds, and a task that fills a tmpfs has the kernel kill its
// processes one after another), the last reading before it stands in:
// tmpfs pages at least half its working set (ShmemBytes).
func (o OOMEvent) DriverByTmpfs() bool {
	if o.KernelUsageBytes > 0 {
		return o.Driver && 2*o.KernelShmemBytes >= o.KernelUsageBytes
	}
	return o.Driver && o.ShmemBytes > 0 && 2*o.ShmemBytes >= o.WorkingSetBytes
}

// DriverTasks says how the task made headroom's step driver the kill's
// choice (DriverRaised, DriverByTmpfs): its own kill at its limit then;
// "" when the kill was not the driver's or not the task's doing.
func (o OOMEvent) DriverTasks() string {
	switch {
	case o.DriverRaised():
		return fmt.Sprintf("whose oom_score_adj the task had raised to %d", *o.RaisedScoreAdj)
	case o.DriverByTmpfs() && o.KernelUsageBytes > 0:
		return fmt.Sprintf("the largest process left to kill: the task's tmpfs pages (a /dev/shm or other tmpfs it wrote, which no process's resident set counts) held %s of the %s at the limit", FormatBytes(o.KernelShmemBytes), FormatBytes(o.KernelUsageBytes))
	case o.DriverByTmpfs():
		return fmt.Sprintf("the largest process left to kill: the task's tmpfs pages (a /dev/shm or other tmpfs it wrote, which no process's resident set counts) held %s of the %s in use at the last reading before the kill (the kernel logged no report of it: it logs ten in five seconds)", FormatBytes(o.ShmemBytes), FormatBytes(o.WorkingSetBytes))
	}
	return ""
}

// TaskKills are the kills of the task's own processes: a kill of
// headroom's step driver (OOMEvent.Driver) is not the task's, unless the
// task made the driver the kernel's choice (DriverTasks: its OOM score
// raised, its tmpfs the memory at the limit).
func TaskKills(ooms []OOMEvent) []OOMEvent {
	var out []OOMEvent
	for _, o := range ooms {
		if !o.Driver || o.DriverTasks() != "" {
			out = append(out, o)
		}
	}
	return out
}

// KilledAt is the usage a kill is said to have happened at: the kernel's
// figure where its report was read (kernel true), else the last sample
// before it, which can be up to a sampling period stale (issue #39:
// "killed at 95MiB" with the kernel's 127.3 MiB).
func (o OOMEvent) KilledAt() (bytes int64, kernel bool) {
	if o.KernelUsageBytes > 0 {
		return o.KernelUsageBytes, true
	}
	return o.WorkingSetBytes, false
}

// KilledAtLabel writes KilledAt with format ("128MiB"; "95MiB (last
// sample)" where the kernel's figure is unknown).
func (o OOMEvent) KilledAtLabel(format func(int64) string) string {
	b, kernel := o.KilledAt()
	if kernel {
		return format(b)
	}
	return format(b) + " (last sample)"
}

// GradingHarness marks a record whose verdict was reached as the task's
// harness reaches it (TrialResult.Grading).
const GradingHarness = "harness"

// UngradedTimeout says whether a record is an agent timeout from before
// headroom graded a timed-out agent's work: run here, not passed, its
// agent timed out and no verifier ran. Its harness would have run the
// verifier, whose reward could have passed it.
func (r TrialResult) UngradedTimeout() bool {
	if r.Imported != nil || r.Grading != "" || r.Outcome != Timeout || (r.Cause != CauseAgentTimeout && r.Cause != CauseStalled) {
		return false
	}
	for _, s := range r.Steps {
		if s.Phase == PhaseVerifier {
			return false
		}
	}
	return true
}

// TrialResult is the durable record of one finished trial.
type TrialResult struct {
	Trial
	// Experiment is the id of the experiment whose trials.jsonl the record
	// was written to (older records: none), so that a line pasted into
	// another experiment's is told apart.
	Experiment string  `json:"experiment,omitempty"`
	Outcome    Outcome `json:"outcome"`
	Cause      Cause   `json:"cause,omitempty"`  // the outcome's sub-kind
	Reason     string  `json:"reason,omitempty"` // why, in a sentence
	// Stall is the memory evidence of a trial that ran past its time
	// limit (its timed-out step's time at the memory limit and major
	// faults), whether or not it was judged a stall.
	Stall *StallEvidence `json:"stall,omitempty"`
	// TaskNotRun marks an infra-error of the task itself: its image did
	// not build, or it lacks the agent. No container was started; the
	// trial says nothing about the ratio, and is left out of the rates.
	TaskNotRun  bool         `json:"task_not_run,omitempty"`
	ContainerID string       `json:"container_id,omitempty"`
	Start       time.Time    `json:"start"`
	End         time.Time    `json:"end"`
	QueuedFor   Duration     `json:"queued_for"`
	Steps       []StepResult `json:"steps"`
	// OutputDroppedBytes is the steps' output not kept in this record,
	// summed (each step's own count is beside its output).
	OutputDroppedBytes int64      `json:"output_dropped_bytes,omitempty"`
	OOMs               []OOMEvent `json:"ooms,omitempty"`
	// RecordCut says what was left out of a record too large to write
	// whole (CutToFit): "" for a record written as it was.
	RecordCut string `json:"record_cut,omitempty"`
	// OOMEventsDropped counts the kills past the record's cap
	// (runner.MaxOOMEvents): counted in their steps' OOMKills, not kept.
	OOMEventsDropped    int    `json:"oom_events_dropped,omitempty"`
	KilledInStep        string `json:"killed_in_step,omitempty"`
	PeakWorkingSetBytes int64  `json:"peak_working_set_bytes"`
	KernelPeakBytes     int64  `json:"kernel_peak_bytes,omitempty"`
	// KernelPeakNoCacheBytes is the largest of the steps' (and the last
	// reading's) KernelPeakNoCacheBytes: the kernel's mark less
	// reclaimable cache; 0 where unknown.
	KernelPeakNoCacheBytes int64 `json:"kernel_peak_no_cache_bytes,omitempty"`
	// CPU is the steps' CPU use summed, when it could be read.
	CPU *CPUUse `json:"cpu,omitempty"`
	// StateOOMKilled is the engine's State.OOMKilled at exit.
	StateOOMKilled bool    `json:"state_oom_killed"`
	Samples        int     `json:"samples"`
	SampleSource   string  `json:"sample_source"` // "cgroup-v1", "cgroup-v2", "docker-stats"
	SampleRateHz   float64 `json:"sample_rate_hz"`
	// PeakMode is how the samples carried the kernel's peak:
	// "kernel-reset" (its high-water mark read and reset at every sample,
	// so each sample's peak_bytes is the exact maximum since the one
	// before, whatever the rate) or "samples" (each sample is its instant);
	// "" in records made before it was kept, or from a source without it.
	PeakMode string `json:"peak_mode,omitempty"`
	// SamplesDropped were read while headroom could not take them (it
	// stalled for seconds); zero in a healthy run.
	SamplesDropped int `json:"samples_dropped,omitempty"`
	// StepRunner is how the steps ran: "exec" (the engine's exec per
	// step) or "driver" (told to a process in the container).
	StepRunner string `json:"step_runner,omitempty"`
	// StepRunnerWhy says why a task image's steps took the engine's exec
	// and not the step driver (--exec-steps, an image with its own
	// ENTRYPOINT, a console binary that is not static...).
	StepRunnerWhy string `json:"step_runner_why,omitempty"`
	// Untraced: the task's scripts ran untraced, each one step (run
	// --trace=false), so a step's peak is its whole script's.
	Untraced bool `json:"untraced,omitempty"`
	// The host's load when the trial started and ended, and any pauses
	// for host memory pressure while it waited to start.
	HostAtStart HostLoad `json:"host_at_start"`
	HostAtEnd   HostLoad `json:"host_at_end"`
	HostPauses  []string `json:"host_pauses,omitempty"`
	// Noise is the host's pressure over the trial and its neighbours.
	Noise *HostNoise `json:"noise,omitempty"`
	// Knobs says how the column's knobs were applied and what was
	// measured of them (nil without knobs).
	Knobs *KnobRecord `json:"knobs,omitempty"`
	// Reward is what the verifier wrote to its reward file, when the task
	// is judged by one and the file could be read.
	// Imported, for a trial read from another harness's results, says
	// where it came from and what its record cannot know.
	Imported *Imported `json:"imported,omitempty"`
	// Grading says how the verdict was reached: GradingHarness for a
	// trial run by a headroom that grades as the task's harness does (a
	// timed-out agent's work verified); "" in older records, whose agent
	// timeouts were never verified.
	Grading string   `json:"grading,omitempty"`
	Reward  *float64 `json:"reward,omitempty"`
	// Verdict is the rule the verifier was judged by (VerdictRule.String:
	// "exit-code", "reward-file", "parser:pytest").
	Verdict string `json:"verdict,omitempty"`
	// Tests is what a parser found in the verifier's output, when the
	// task is judged by one and it found results.
	Tests *TestTally `json:"tests,omitempty"`
	// Replay, for a trial that replayed another harness's recorded
	// session, is how it went against the recording.
	Replay *ReplayRecord `json:"replay,omitempty"`
	// PidsLimitEnforced says, when the pids limit that held was not the
	// policy's (Policy.PidsLimit) — a pod's is its node's podPidsLimit —
	// what it was and why; empty when it was the policy's.
	PidsLimitEnforced string `json:"pids_limit_enforced,omitempty"`
	// Sidecars are the compose environment's other services' use.
	Sidecars []SidecarUsage `json:"sidecars,omitempty"`
	// Disk is what the trial wrote to its container's file system, with
	// the task's storage spec and whether a bound held it (nil where the
	// backend does not read it, and in records made before it was kept).
	Disk *DiskUse `json:"disk,omitempty"`
	// Phases are a multi-step task's phases as they ran, in order; those
	// after an early stop are absent.
	Phases []PhaseResult `json:"phases,omitempty"`
	// Install is an installed agent's install phase, apart from its
	// solving (nil when the agent installs nothing).
	Install *PhaseSummary `json:"install,omitempty"`
	// Activities are the processes the steps started that lived long
	// enough to be seen (model.Activity); ProcessSource says how they were
	// watched ("proc", "top", "" when not) and ActivitiesDropped how many
	// went unrecorded past the cap.
	Activities        []Activity `json:"activities,omitempty"`
	ActivitiesDropped int        `json:"activities_dropped,omitempty"`
	// StepsDropped counts the steps a record too large to write left out
	// (CutToFit): those between its first and last RecordCutSteps.
	StepsDropped int `json:"steps_dropped,omitempty"`
	// ProcessesUnread is the most processes one sample left unread past
	// the watch's cap (a fork storm).
	ProcessesUnread int    `json:"processes_unread,omitempty"`
	ProcessSource   string `json:"process_source,omitempty"`
}

// HostLoad is the host's state at one moment.
type HostLoad struct {
	AvailableBytes int64   `json:"available_bytes"`
	Load1          float64 `json:"load1"`
}

// Duration is a time.Duration that reads and writes as "1.5s" in JSON.
type Duration time.Duration

// MarshalText writes the Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Imported is where an imported trial came from (`headroom import`).
type Imported struct {
	// Harness is "harbor" or "terminal-bench"; Job its job (or run)
	// directory; Trial the trial's own name there.
	Harness string `json:"harness"`
	Job     string `json:"job"`
	Trial   string `json:"trial"`
	Model   string `json:"model,omitempty"`
	// Exception is the harness's own word for what went wrong
	// (AgentTimeoutError, agent_timeout), with its message.
	Exception string `json:"exception,omitempty"`
	Message   string `json:"message,omitempty"`
	// Settings are the resource settings the trial ran with, as the
	// harness recorded them.
	Settings string `json:"settings,omitempty"`
	// Unknown lists what the harness does not record, which the record
	// therefore does not hold (never invented): "memory trace", ...
	Unknown []string `json:"unknown"`
}

// RecordCutSteps is how many of its first and of its last steps a record
// too large to write keeps when CutToFit must leave steps out.
const RecordCutSteps = 100

// CutToFit leaves out of a record, in turn, what is detail and not
// verdict until marshal says it fits in max bytes: the steps' kept
// output, each kill's process tree and command line, the processes seen,
// the task's measures, the steps' shown commands past 200 bytes and
// their folded commands, then the steps between its first and last
// RecordCutSteps. It says what it left out in RecordCut; fits is
// false when even the verdict alone does not fit. Every field with no
// bound of its own is bounded elsewhere; this keeps one that slipped from
// making a record no reader takes (a reader refuses a line past 64 MiB,
// and with it the whole file).
func (r *TrialResult) CutToFit(max int, marshal func(*TrialResult) int) (fits bool) {
	size := marshal(r)
	if size <= max {
		return true
	}
	// What is cut is this record's own, not its caller's.
	r.Steps, r.OOMs = slices.Clone(r.Steps), slices.Clone(r.OOMs)
	if r.Knobs != nil {
		k := *r.Knobs
		r.Knobs = &k
	}
	var cut []string
	for _, c := range []struct {
		what string
		do   func()
	}{
		{"the steps' output", func() {
			for i := range r.Steps {
				r.Steps[i].Output = ""
			}
		}},
		{"the kills' process trees and command lines", func() {
			for i := range r.OOMs {
				r.OOMs[i].Tree, r.OOMs[i].Command = nil, ""
			}
		}},
		{"the processes seen", func() {
			r.ActivitiesDropped += len(r.Activities)
			r.Activities = nil
		}},
		{"the task's measures", func() {
			if r.Knobs != nil {
				r.Knobs.MeasuresDropped += len(r.Knobs.Measured)
				r.Knobs.Measured = nil
			}
		}},
		{"the steps' commands past 200 bytes and their folded commands", func() {
			for i := range r.Steps {
				r.Steps[i].Show, r.Steps[i].Folded = Clip(r.Steps[i].Show, 200), nil
				r.Steps[i].Name = Clip(r.Steps[i].Name, 200)
			}
		}},
		{fmt.Sprintf("the steps between the first and last %d", RecordCutSteps), func() {
			if n := len(r.Steps); n > 2*RecordCutSteps {
				r.StepsDropped += n - 2*RecordCutSteps
				r.Steps = append(r.Steps[:RecordCutSteps:RecordCutSteps], r.Steps[n-RecordCutSteps:]...)
			}
		}},
	} {
		c.do()
		cut = append(cut, c.what)
		r.RecordCut = fmt.Sprintf("the record was %d bytes, over the %d a record may be: left out %s", size, max, strings.Join(cut, ", "))
		if marshal(r) <= max {
			return true
		}
	}
	return false
}

// Clip cuts s to at most n bytes, at a rune's start, marking the cut
// with "…" (runner.Clip, for every shown command and output line, is it).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
