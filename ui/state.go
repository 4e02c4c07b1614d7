// Package ui is headroom's console, built with Bubble Tea: setup, live
// trial cards, the outcome matrix, trial detail, focus mode and history.
// It consumes the runner's event stream exactly as the headless command
// does and never talks to Docker itself.
package ui

import (
	"fmt"
	"sort"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
)

// TrialPhase is where a trial is in its life.
type TrialPhase int

// Trial phases.
const (
	Queued TrialPhase = iota
	Waiting
	// Creating: let in, its container being created; it counts as
	// running.
	Creating
	Running
	Finished
)

// active says whether a phase counts as running: created or being
// created, not yet finished.
func (p TrialPhase) active() bool { return p == Creating || p == Running }

// Bounds on what a trial view keeps in memory.
const (
	tailLines = 6    // output lines shown on a card
	logLines  = 5000 // log lines kept for the detail view
)

// TrialView is everything the console knows about one trial.
type TrialView struct {
	Trial      model.Trial
	Phase      TrialPhase
	WaitReason string
	// stopped: its container is dead, its removal and record under way
	// (event.TrialStopped); it counts in Finishing, not Running.
	stopped     bool
	ContainerID string
	Image       string
	Source      string
	Started     time.Time
	Ended       time.Time

	Samples []event.Sample
	Last    event.Sample
	Peak    int64

	Step      *event.StepStarted // the running step, nil between steps
	StepAt    time.Time
	Steps     []model.StepResult
	Tail      []string // last lines of the running step
	Log       []string
	LogDrop   int
	OOMs      []model.OOMEvent
	Result    *model.TrialResult
	KillLimit int64
	// Activities are the processes the steps started (the runner caps
	// how many), in the order they were seen.
	Activities []model.Activity
	// whole: Result is the trial's whole record, not its summary's.
	whole bool
	// seenAtKill is how many samples had arrived when the first kill
	// did (killSeen: it was seen live): a sample from before the kill
	// that arrives after it, late on a loaded host, does not redraw the
	// killed card's picture during its linger.
	seenAtKill int
	killSeen   bool
}

// KillSamples are the samples the killed card draws: those that had
// arrived when the kill did, where it was seen live; else all.
func (t *TrialView) KillSamples() []event.Sample {
	if t.killSeen && t.seenAtKill <= len(t.Samples) {
		return t.Samples[:t.seenAtKill]
	}
	return t.Samples
}

// TaskKills are the trial's kills of the task's own processes: a kill of
// headroom's step driver (model.OOMEvent.Driver) is said by the trial's
// cause, never named as what the task lost.
func (t *TrialView) TaskKills() []model.OOMEvent { return model.TaskKills(t.OOMs) }

// Killed says whether any OOM kill landed in the trial: one seen as it
// happened, or only in the verdict (the engine's OOMKilled flag at exit,
// when no kill event was caught), so a kill card stays its 10 s either way.
func (t *TrialView) Killed() bool {
	return len(t.OOMs) > 0 || (t.Result != nil && (t.Result.StateOOMKilled || t.Result.Outcome == model.OOMKilled))
}

// KernelPeak is the kernel's highest usage over the trial's finished
// steps (and its record, once it ends), less reclaimable cache where the
// record has that figure (model.TrialKernelNeed): what catches a spike
// between two samples.
func (t *TrialView) KernelPeak() int64 {
	var k int64
	for _, s := range t.Steps {
		k = max(k, model.StepKernelNeed(s))
	}
	if t.Result != nil {
		k = max(k, model.TrialKernelNeed(*t.Result))
	}
	return k
}

// NeedBytes is the trial's need: the larger of its sampled peak and the
// kernel's (model.TrialPeakBytes), the one figure every view calls peak.
func (t *TrialView) NeedBytes() int64 { return max(t.Peak, t.KernelPeak()) }

// PeakText is the need as the console's detail writes it (format: how a
// size is written), the sampled peak named beside it where they differ
// (model.PeakLabel). A finished trial's is its record's, as the headless
// line and the report write it (model.TrialPeakLabel): a killed trial's
// kernel usage at the kill first, where it is above the peak less cache.
// The detail said "58.9MiB (kernel; sampled 51.8MiB)" under a card and a
// line saying 65.2MiB (a new user's).
func (t *TrialView) PeakText(format func(int64) string) string {
	if t.Result != nil {
		return model.TrialPeakLabel(*t.Result, format)
	}
	var noCache int64
	for _, s := range t.Steps {
		noCache = max(noCache, s.KernelPeakNoCacheBytes)
	}
	if noCache == 0 {
		return model.PeakLabel(t.Peak, t.KernelPeak(), format)
	}
	return model.NamedPeakLabel(t.Peak, 0, t.KernelPeak(), format)
}

// KilledAt is when the trial's (last) kill landed, the moment its card
// freezes at: the kill's own time, or the trial's end for a kill known
// only from the verdict; zero when nothing was killed.
func (t *TrialView) KilledAt() time.Time {
	if !t.Killed() {
		return time.Time{}
	}
	if n := len(t.OOMs); n > 0 && !t.OOMs[n-1].At.IsZero() {
		return t.OOMs[n-1].At
	}
	return t.Ended
}

// atKill is the card's memory as it was at the kill (KilledAt): the
// working set the kill landed at and the cache beside it, and the sampled
// peak until then. A killed card draws these for its whole linger, so the
// picture of the kill stays on screen after the trial has moved on.
func (t *TrialView) atKill(at time.Time) (ws, cache, peak int64) {
	samples := t.KillSamples()
	i := sort.Search(len(samples), func(i int) bool { return samples[i].Time.After(at) })
	for _, s := range samples[:i] {
		peak = max(peak, s.WorkingSetBytes)
	}
	if i > 0 {
		ws, cache = samples[i-1].WorkingSetBytes, samples[i-1].CacheBytes
	}
	if n := len(t.OOMs); n > 0 && t.OOMs[n-1].WorkingSetBytes > 0 {
		ws = t.OOMs[n-1].WorkingSetBytes
	}
	if i == 0 && ws == 0 {
		// Nothing sampled before it (a verdict-only kill of a trial
		// whose samples are gone): its peak is what is known.
		ws = t.Peak
	}
	peak = max(peak, ws) // the samples' (the card names the kernel's beside it)
	if n := len(t.OOMs); n > 0 {
		// The gauge shows the kernel's own figure at the kill, where its
		// report was read: the last sample can be a period stale (a new
		// user's card froze at 33M under a banner "at 65M / 64M").
		if b, kernel := t.OOMs[n-1].KilledAt(); kernel && b > ws+cache {
			ws = b - cache
		}
	}
	return ws, cache, peak
}

// log keeps the last logLines lines, trimming in bulk so a long burst
// costs amortised constant time per line.
func (t *TrialView) log(line string) {
	t.Log = append(t.Log, line)
	if len(t.Log) > 2*logLines {
		drop := len(t.Log) - logLines
		t.Log = append(t.Log[:0:0], t.Log[drop:]...)
		t.LogDrop += drop
	}
}

// SweepState is the console's reduction of the event stream.
type SweepState struct {
	Plan   model.Plan
	Order  []string
	Trials map[string]*TrialView
	Matrix *model.Matrix
	Counts map[model.Outcome]int
	// Stalled counts the timeouts that stalled at their limit (in
	// Counts[Timeout] too): the progress line says them apart.
	Stalled int
	Done    int
	Running int
	// Finishing counts the trials whose container is dead (its place
	// among the trials at once free: the next may be running) and whose
	// removal and record go on: not running, so that "running" never
	// reads more than the sweep's concurrency.
	Finishing   int
	Started     time.Time
	Finished    bool
	Interrupted bool
	// LastOOM is the most recent kill, for the status line.
	LastOOM *event.OOMKill
	// stage is the kill or pass each ratio's cell holds on the live screen
	// (cellCards).
	stage map[model.Ratio]stageHold

	analysis     *model.Analysis
	analysisDone int
	regimes      []model.RegimeSplit
	regimesDone  int
	analysisBase model.Ratio
	// cells and rowTrials index Order by matrix cell and by row, in
	// order, and rows lists the matrix's rows in order: the matrix asks
	// for every cell on every frame. views keeps each cell's view until
	// the next event (version counts them), so an opened experiment's
	// frames reuse them.
	cells     map[cellKey][]string
	rows      []model.RowKey
	rowTrials map[model.RowKey][]string
	indexed   int // how much of Order is indexed
	version   int
	views     map[cellKey]cellView
	viewsAsOf [3]int // version, Done, len(Order)
	// widest is widestCells' answer for widestRows × widestRatios,
	// while widestOK (until the views are renewed).
	widest                   [2]int
	widestOK                 bool
	widestRows, widestRatios int
}

type cellKey struct {
	row   model.RowKey
	ratio model.Ratio
}

// index brings the cell and row indexes up to Order (which only grows).
func (s *SweepState) index() {
	if s.indexed > len(s.Order) || s.cells == nil {
		s.cells, s.rows, s.rowTrials, s.indexed = map[cellKey][]string{}, nil, map[model.RowKey][]string{}, 0
	}
	for _, id := range s.Order[s.indexed:] {
		tr := s.Trials[id].Trial
		k := cellKey{model.RowKey{Task: tr.Task, Agent: tr.Agent}, tr.Ratio}
		if s.rowTrials[k.row] == nil {
			s.rows = append(s.rows, k.row)
		}
		s.rowTrials[k.row] = append(s.rowTrials[k.row], id)
		// In repeat order, whatever order the trials came in: a resume
		// admits a cell's cancelled repeat after its later ones, and the
		// cell read "x++" where the report said "+x+" (a new user's).
		cell := append(s.cells[k], id)
		for i := len(cell) - 1; i > 0 && s.Trials[cell[i-1]].Trial.Repeat > tr.Repeat; i-- {
			cell[i-1], cell[i] = cell[i], cell[i-1]
		}
		s.cells[k] = cell
	}
	s.indexed = len(s.Order)
}

// Analysis is the matrix's statistics against baseline, recomputed only
// when a trial has ended since the last call.
func (s *SweepState) Analysis(baseline model.Ratio) *model.Analysis {
	if s.analysis == nil || s.analysisDone != s.Done || s.analysisBase != baseline {
		s.analysis = model.Analyze(s.Matrix, baseline, model.DefaultNoisePP, model.DefaultNoisePP)
		s.analysisDone, s.analysisBase = s.Done, baseline
	}
	return s.analysis
}

// Regimes splits the change between adjacent ratios into trials rescued
// from an infra failure and trials made easier (model.AdjacentRegimes),
// recomputed only when a trial has ended since the last call. A task's
// trials pair by repeat where it replays them: its image is the seeded
// workload's (model.SeededImage), by the sweep's tasks (launched: tasks)
// or, opened from history, the image its trials ran.
func (s *SweepState) Regimes(tasks []model.Task) []model.RegimeSplit {
	if s.regimesDone != s.Done || (s.regimes == nil && s.Done > 0) {
		trials := make([]*model.TrialResult, 0, s.Done)
		replays := map[string]bool{}
		for _, t := range tasks {
			replays[t.Name] = model.SeededImage(t.Image)
		}
		for _, id := range s.Order {
			if v := s.Trials[id]; v.Result != nil {
				trials = append(trials, v.Result)
				if v.Image != "" {
					replays[v.Trial.Task] = model.SeededImage(v.Image)
				}
				if v.Result.Replayed() {
					replays[v.Trial.Task] = true // a recorded session's actions
				}
			}
		}
		s.regimes, s.regimesDone = model.AdjacentRegimesOf(trials, replays), s.Done
		if s.regimes == nil {
			s.regimes = []model.RegimeSplit{}
		}
	}
	return s.regimes
}

// NewSweepState starts an empty state for a plan.
func NewSweepState(plan model.Plan, now time.Time) *SweepState {
	s := &SweepState{Plan: plan, Trials: make(map[string]*TrialView, len(plan.Trials)), Order: make([]string, 0, len(plan.Trials)), Counts: map[model.Outcome]int{}, Started: now}
	s.Matrix = model.NewMatrix(plan.Ratios, nil)
	views := make([]TrialView, len(plan.Trials)) // one allocation, not one a trial
	for i, tr := range plan.Trials {
		if _, ok := s.Trials[tr.ID]; !ok {
			views[i].Trial = tr
			s.Trials[tr.ID] = &views[i]
			s.Order = append(s.Order, tr.ID)
		}
	}
	return s
}

func (s *SweepState) ensure(tr model.Trial) *TrialView {
	if v, ok := s.Trials[tr.ID]; ok {
		return v
	}
	v := &TrialView{Trial: tr}
	s.Trials[tr.ID] = v
	s.Order = append(s.Order, tr.ID)
	return v
}

// Apply folds one event into the state.
func (s *SweepState) Apply(e event.Event) {
	e = printableEvent(e)
	s.version++
	v := s.Trials[e.TrialID()]
	switch e := e.(type) {
	case event.SweepStarted:
		for _, tr := range e.Plan.Trials {
			s.ensure(tr)
		}
	case event.TrialQueued:
		s.ensure(e.Trial)
	case event.TrialWaiting:
		if v != nil {
			s.setPhase(v, Waiting)
			v.WaitReason = e.Reason
		}
	case event.TrialCreating:
		if v != nil {
			s.setPhase(v, Creating)
			v.WaitReason = ""
		}
	case event.TrialStarted:
		if v != nil {
			s.setPhase(v, Running)
			v.ContainerID, v.Image, v.Source, v.Started = e.ContainerID, e.Image, e.SampleSource, e.At()
			v.WaitReason = ""
		}
	case event.TrialStopped:
		if v != nil && v.Phase.active() && !v.stopped {
			v.stopped = true
			s.Running--
			s.Finishing++
		}
	case event.StepStarted:
		if v != nil {
			st := e
			v.Step, v.StepAt, v.Tail = &st, e.At(), nil
			v.log("==> [" + e.Phase + "] " + model.StepLabel(e.Step.Name, e.Step.Show))
		}
	case event.OutputLine:
		if v != nil {
			v.Tail = append(v.Tail, e.Text)
			if len(v.Tail) > tailLines {
				v.Tail = v.Tail[len(v.Tail)-tailLines:]
			}
			if e.Live {
				// Shown on the card as it comes; the log gets it with the
				// step's tail, when the step ends.
				break
			}
			if e.Skipped > 0 {
				v.log(fmt.Sprintf("==> [headroom] %d line(s), %s of this step's output not shown (a step printing fast shows its first and last MiB)", e.Skipped, model.FormatBytes(e.SkippedBytes)))
			}
			v.log(model.LogOutputLine(e.Stream, e.Text))
		}
	case event.MemorySample:
		if v != nil {
			v.Samples = append(v.Samples, e.Sample)
			v.Last = e.Sample
			v.Peak = max(v.Peak, e.WorkingSetBytes)
		}
	case event.OOMKill:
		if v != nil && e.Detail && len(v.OOMs) > 0 {
			v.OOMs[len(v.OOMs)-1] = e.OOM
			at := ""
			if b, kernel := e.OOM.KilledAt(); kernel {
				at = " at " + model.FormatBytes(b)
			}
			if why := e.OOM.DriverTasks(); why != "" {
				v.log("==> the kernel then killed headroom's step driver (the container's PID 1)" + at + ", " + why + ": the task's own kill")
				break
			}
			if e.OOM.Driver {
				v.log("==> the kernel then killed headroom's step driver (the container's PID 1)" + at + ": the container ends, the verifier cannot run")
				break
			}
			v.log("==> the kernel killed " + killedName(e.OOM) + at)
			break
		}
		if v != nil {
			if !v.killSeen {
				v.killSeen, v.seenAtKill = true, len(v.Samples)
			}
			v.OOMs = append(v.OOMs, e.OOM)
			v.KillLimit = e.LimitBytes
			v.log("==> OOM kill in step " + e.OOM.Step + " at " + e.OOM.KilledAtLabel(model.FormatBytes))
			ev := e
			s.LastOOM = &ev
		}
	case event.ActivityStarted:
		if v != nil && !v.endActivity(e.Activity) {
			v.Activities = append(v.Activities, e.Activity)
		}
	case event.ActivityEnded:
		if v != nil {
			v.endActivity(e.Activity)
		}
	case event.StepEnded:
		if v != nil {
			v.Steps = append(v.Steps, e.Result)
			v.Step = nil
		}
	case event.TrialEnded:
		r := e.Result
		s.ended(v, &r, e.At())
	case event.SweepEnded:
		s.Finished, s.Interrupted = true, e.Interrupted
	}
}

// ended folds in a trial's result (printable already), kept as it is;
// v is its view (nil: made for it).
func (s *SweepState) ended(v *TrialView, r *model.TrialResult, at time.Time) {
	if v == nil {
		v = s.ensure(r.Trial)
	}
	s.setPhase(v, Finished)
	v.Result, v.Ended, v.Step = r, at, nil
	if len(r.Steps) > 0 {
		// The record is final: a traced command's status may be
		// learnt after its step's live event.
		v.Steps = r.Steps
	}
	if len(r.Activities) > 0 {
		v.Activities = r.Activities
	}
	if len(v.OOMs) == 0 {
		v.OOMs = r.OOMs
	}
	if v.ContainerID == "" {
		v.ContainerID, v.Source = r.ContainerID, r.SampleSource
	}
	v.Peak = max(v.Peak, r.PeakWorkingSetBytes)
	s.Matrix.Add(*r)
	s.Counts[r.Outcome]++
	if r.MemoryFailure() == model.StalledAtLimit {
		s.Stalled++
	}
	s.Done++
}

// Ran is how many trials ran to an end: the finished ones but the
// cancelled.
func (s *SweepState) Ran() int { return s.Done - s.Counts[model.Cancelled] }

// manyTasks says whether the sweep runs more than one task (its cards
// then name theirs).
func (s *SweepState) manyTasks() bool {
	for _, id := range s.Order {
		if s.Trials[id].Trial.Task != s.Trials[s.Order[0]].Trial.Task {
			return true
		}
	}
	return false
}

// doneText says how far the sweep got: the trials that ran to an end of
// all planned, then the cancelled (they ended, but ran no course: a sweep
// quit mid-way read "150 of 150 trials done" with 142 cancelled) and any
// that never ended at all.
func (s *SweepState) doneText() string {
	t := fmt.Sprintf("%d of %d trials done", s.Ran(), len(s.Order))
	if n := s.Counts[model.Cancelled]; n > 0 {
		t += fmt.Sprintf(", %d cancelled", n)
	}
	if n := len(s.Order) - s.Done; n > 0 {
		t += fmt.Sprintf(", %d not ended", n)
	}
	return t
}

// setPhase moves a trial to phase p, keeping Running the count of trials
// created or being created and not yet stopped (Finishing the stopped).
func (s *SweepState) setPhase(v *TrialView, p TrialPhase) {
	switch {
	case v.Phase.active() && !p.active() && v.stopped:
		s.Finishing--
	case v.Phase.active() && !p.active():
		s.Running--
	case !v.Phase.active() && p.active():
		s.Running++
	}
	v.Phase = p
}

// FromResults builds a finished state from stored results (history).
// The state keeps results (each made printable in place, as Apply makes
// an event's): the caller hands them over.
func FromResults(plan model.Plan, results []model.TrialResult) *SweepState {
	s := NewSweepState(plan, time.Time{})
	for i := range results {
		r := &results[i]
		*r = printable.Value(*r)
		s.version++
		s.ended(s.Trials[r.ID], r, r.End)
	}
	s.Finished = true
	return s
}

// withImages gives each trial opened from history its task's image from
// the manifest (images, by task name), as a live trial has it from its
// start: without it, a trial opened from History said "r reruns it with
// the same settings" and its docker run line ended in IMAGE, where the
// same trial live said "r reruns exactly this trial" and named its image
// (a fourth new user's).
func (s *SweepState) withImages(images map[string]string) *SweepState {
	for _, v := range s.Trials {
		if v.Image == "" {
			v.Image = images[v.Trial.Task]
		}
	}
	return s
}

// ResumedState is a resumed experiment's state: its whole plan, with the
// results it kept (those the resume does not rerun) already finished, and
// the rerun trials queued, so the matrix counts the whole experiment as
// report and a reopen do.
func ResumedState(plan model.Plan, results []model.TrialResult, rerun model.Plan, now time.Time) *SweepState {
	again := map[string]bool{}
	for _, tr := range rerun.Trials {
		again[tr.ID] = true
	}
	full := plan
	full.Trials = append([]model.Trial(nil), plan.Trials...)
	planned := make(map[string]bool, len(plan.Trials))
	for _, tr := range plan.Trials {
		planned[tr.ID] = true
	}
	for _, tr := range rerun.Trials {
		if !planned[tr.ID] {
			full.Trials = append(full.Trials, tr)
		}
	}
	s := NewSweepState(full, now)
	for _, r := range results {
		if !again[r.ID] {
			s.Apply(event.TrialEnded{Base: event.Base{Trial: r.ID, Time: r.End}, Result: r})
		}
	}
	return s
}

// Waiting lists trials held back by admission control, in plan order.
func (s *SweepState) Waiting() []*TrialView {
	var out []*TrialView
	for _, id := range s.Order {
		if v := s.Trials[id]; v.Phase == Waiting {
			out = append(out, v)
		}
	}
	return out
}

// Queued counts trials not started yet.
func (s *SweepState) Queued() int {
	n := 0
	for _, v := range s.Trials {
		if v.Phase == Queued || v.Phase == Waiting {
			n++
		}
	}
	return n
}

// Cell lists the trials of one matrix cell in repeat order.
func (s *SweepState) Cell(row model.RowKey, r model.Ratio) []*TrialView {
	s.index()
	var out []*TrialView
	for _, id := range s.cells[cellKey{row, r}] {
		out = append(out, s.Trials[id])
	}
	return out
}

// ETA is the time left by the preview's estimate (estimate gives a
// trial's, trialEstimate), paced by how long the finished trials took
// against theirs, over the concurrency: the live screen's first eta
// (2m12s, the first trial's time × all the rest) disagreed with the
// preview's (50 s), and one estimate is what both say. A sweep with a
// trial no estimate covers (a real command) goes by the finished trials'
// mean instead, from the first one's end.
func (s *SweepState) ETA(now time.Time, concurrency int, estimate func(model.Trial) time.Duration) time.Duration {
	if concurrency < 1 {
		return 0
	}
	var took, expected, left, running time.Duration
	for _, id := range s.Order {
		v := s.Trials[id]
		e := estimate(v.Trial)
		if e <= 0 && v.Phase != Finished {
			return s.meanETA(now)
		}
		switch v.Phase {
		case Finished:
			// Only trials that ran their course pace the rest: a kill
			// ends early (the showcase's first 1x kill took the eta from
			// 48 s to 29 s).
			if o := v.Result; o != nil && o.Outcome.Counted() && !o.Outcome.InfraFailure() && !v.Started.IsZero() {
				took, expected = took+v.Ended.Sub(v.Started), expected+e
			}
		case Running, Creating:
			left += e
			if !v.Started.IsZero() {
				running += min(now.Sub(v.Started), e)
			}
		default:
			left += e
		}
	}
	pace := 1.0
	if expected > 0 {
		pace = float64(took) / float64(expected)
	}
	return time.Duration(pace * float64(left-running) / float64(concurrency)).Round(time.Second)
}

// meanETA projects the finished trials' pace onto the rest (0 until one
// has finished).
func (s *SweepState) meanETA(now time.Time) time.Duration {
	if s.Done == 0 {
		return 0
	}
	elapsed := now.Sub(s.Started)
	left := len(s.Order) - s.Done
	return time.Duration(float64(elapsed) / float64(s.Done) * float64(left))
}
