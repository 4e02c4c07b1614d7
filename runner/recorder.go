package runner

import (
	"sync"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// recorder is a trial's telemetry: what its sandbox's readings say
// (memory samples, OOM kills), folded into the steps they fall in — each
// step's sampled peak, the kernel's mark less cache, time at the limit,
// major faults, which step a kill landed in. Both backends feed it through
// their sandbox's channels (watch); its methods take the readings
// themselves, so it is tested without a sandbox.
//
// mu guards the recorder and the parts of the trial's result it writes
// (out): OOMs, PeakWorkingSetBytes and Steps (closeStep appends under it,
// so a late kill's notice finds its step). The process watch (procs.go)
// shares mu for the activities and a kill's process tree.
type recorder struct {
	mu  sync.Mutex
	out *model.TrialResult
	// driverKept: the kill of the step driver was kept past MaxOOMEvents.
	driverKept bool
	// limit is the trial's hard limit (0: none).
	limit int64
	// hostLoad reads the host, for hostOver (nil: a remote engine's host).
	hostLoad func() HostLoad
	// named fills in the i-th kill's command and process tree from the
	// process watch; called with mu held.
	named func(i int)

	step string // the running step's name
	// elsewhere names the container the steps now run in when it is not
	// the trial's (a separate verifier's): their memory is not the
	// trial's (model.StepResult.Container).
	elsewhere string
	stepStart time.Time
	stepPeak  int64
	lastWS    int64
	lastShmem int64
	// noCache is the step's kernel peak less reclaimable cache.
	noCache noCachePeak
	kills   int // OOM kills seen (max over sources)
	// lateKills are the kills counted since the running step opened that
	// landed in an earlier step (their notice came late): not its own.
	lateKills int
	oomNotify chan struct{} // closed and replaced on each new kill
	samples   int
	firstAt   time.Time
	lastAt    time.Time
	// The running step's time at the limit and its major faults so far.
	stepAtLimit      time.Duration
	stepFaultsFirst  int64
	stepFaultsLast   int64
	stepFaultsOpened bool
	// stepFaultsAtLimit are the step's major faults over the intervals
	// that ended at the limit: the thrash a stall is judged by.
	stepFaultsAtLimit int64
	// host is the host over the trial, read from its samples at most once
	// a second (only the watch goroutine touches it).
	host hostOver
	// peakBeforeKill is the kernel's peak read before headroom stopped a
	// step (after the stop the cgroup may be gone and read nothing).
	peakBeforeKill int64
	// waits divides the CPU wait the samples read (and the steps' ends)
	// between the host and the trial.
	waits waitSplit
	// atLimit, when set, is told (once) that a sample found the container
	// at nine tenths of its limit or more: the sweep's other trials ran
	// beside a trial at its limit (neighbourhood.markAtLimit).
	atLimit     func()
	toldAtLimit bool
}

// newRecorder records into out for a trial under limit.
func newRecorder(out *model.TrialResult, limit int64, hostLoad func() HostLoad) recorder {
	return recorder{out: out, limit: limit, hostLoad: hostLoad, oomNotify: make(chan struct{})}
}

// watch turns the sandbox's readings into the record and into events, as
// they come, until the sandbox closes its channels (on Remove).
func (r *recorder) watch(sb Telemetry, trial string, limit int64, emit func(event.Event)) {
	readings(sb, func(s event.Sample) {
		r.sample(s)
		emit(event.MemorySample{Base: event.Base{Trial: trial, Time: s.Time}, Sample: s})
	}, func(o OOMSignal) {
		if oe, detail, ok := r.oom(o); ok {
			emit(event.OOMKill{Base: event.Base{Trial: trial, Time: time.Now()}, OOM: oe, LimitBytes: limit, Detail: detail})
		}
	})
}

// readings hands a sandbox's readings to sample and oom, in the order
// they come, until it closes both channels (on Remove).
func readings(sb Telemetry, sample func(event.Sample), oom func(OOMSignal)) {
	samples, ooms := sb.Samples(), sb.OOMs()
	for samples != nil || ooms != nil {
		select {
		case s, ok := <-samples:
			if !ok {
				samples = nil
				continue
			}
			sample(s)
		case o, ok := <-ooms:
			if !ok {
				ooms = nil
				continue
			}
			oom(o)
		}
	}
}

// sample takes one memory reading.
func (r *recorder) sample(s event.Sample) {
	r.host.readIfDue(s.Time, r.hostLoad)
	if s.CPUWaitRead && s.CPU.UsageNanos > 0 {
		r.waits.add(s.CPUWaitNanos, s.CPU.UsageNanos, s.Time)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.samples == 0 {
		r.firstAt = s.Time
	}
	r.samples++
	// A reading taken before the running step opened and delivered after
	// it (a watch lagging on a loaded host) is the step before's: the
	// trial's figures take it, the running step's do not.
	if !s.Time.Before(r.stepStart) {
		if !r.lastAt.IsZero() && model.AtLimit(s.UsageBytes, s.WorkingSetBytes, r.limit) {
			r.stepAtLimit += s.Time.Sub(r.lastAt)
			if r.stepFaultsOpened {
				r.stepFaultsAtLimit += s.MajorFaults - r.stepFaultsLast
			}
		}
		if !r.stepFaultsOpened {
			r.stepFaultsFirst, r.stepFaultsOpened = s.MajorFaults, true
		}
		r.stepFaultsLast = s.MajorFaults
		r.noCache.sample(s)
		r.stepPeak = max(r.stepPeak, s.WorkingSetBytes)
	}
	if r.atLimit != nil && !r.toldAtLimit && r.limit > 0 && max(s.UsageBytes, s.PeakBytes)*10 >= r.limit*9 {
		r.toldAtLimit = true
		r.atLimit()
	}
	r.lastAt = s.Time
	r.lastWS, r.lastShmem = s.WorkingSetBytes, s.ShmemBytes
	r.out.PeakWorkingSetBytes = max(r.out.PeakWorkingSetBytes, s.WorkingSetBytes)
}

// oom takes one kill signal. It returns the kill to report and true when
// the signal says something new: a kill not yet counted, or (detail) the
// kernel's word on what a counted kill killed.
func (r *recorder) oom(o OOMSignal) (oe model.OOMEvent, detail, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.Count <= r.kills {
		// A later word on a kill already counted (the kernel's log after a
		// faster source): what was killed, the kernel's figure at the
		// kill, once; and the kill's own time, when the first word had
		// none or a later one (a counter read late on a loaded host, as
		// the next step ran): the step it landed in is the one that ran
		// then, while the step it was put in still runs.
		// Each kill counted has its event, in order: the word is on
		// kill number o.Count (a counter that read two kills at once made
		// two, and the kernel's word on the first is the first's).
		n := o.Count
		if n > len(r.out.OOMs) && len(r.out.OOMs) >= MaxOOMEvents && o.Driver && !r.driverKept {
			// Past the record's cap, the kill that took headroom's step
			// driver is still kept (one: the container ends with it):
			// dropped, its cause was lost and the trial's end read as
			// the engine gone (a task's 150 kills in a loop: "engine-lost"
			// for 3 trials of 4).
			r.driverKept = true
			one := OOMEvent(o, r.killedIn(o.Time), r.lastWS, r.lastShmem)
			FillKill(&one, o)
			r.out.OOMs = append(r.out.OOMs, one)
			r.out.OOMEventsDropped = max(r.out.OOMEventsDropped-1, 0)
			r.name(len(r.out.OOMs) - 1)
			return one, true, true
		}
		if n <= 0 || n > len(r.out.OOMs) {
			// No count, or a kill past the record's cap: none kept.
			return oe, false, false
		}
		last := &r.out.OOMs[n-1]
		moved := false
		if !o.Time.IsZero() && (last.At.IsZero() || o.Time.Before(last.At)) && o.Time.Before(r.stepStart) && last.Step == r.step && r.stepOpen() {
			if step := r.killedIn(o.Time); step != last.Step {
				last.Step, moved = step, true
			}
			last.At = o.Time
		}
		if !FillKill(last, o) && !moved {
			return oe, false, false
		}
		r.name(n - 1)
		return *last, true, true
	}
	newKills := o.Count - r.kills
	r.kills = o.Count
	oe = OOMEvent(o, r.killedIn(o.Time), r.lastWS, r.lastShmem)
	// One event a kill: a count that rose by more than one (two kills
	// between two reads of a loaded host's counter) is as many kills,
	// the signal's word on the last of them; the kernel's word on each
	// comes after, by its count.
	for k := newKills; k > 0; k-- {
		if len(r.out.OOMs) >= MaxOOMEvents && !(k == 1 && oe.Driver && !r.driverKept) {
			// Counted (the steps' kills are r.kills), said live, not kept
			// (but for the step driver's, as above).
			r.out.OOMEventsDropped += k
			break
		}
		if len(r.out.OOMs) >= MaxOOMEvents {
			r.driverKept = true
		}
		one := oe
		if k > 1 {
			one.Process, one.PID, one.RSSBytes, one.KernelUsageBytes, one.Driver, one.RaisedScoreAdj = "", 0, 0, 0, false, nil
		}
		r.out.OOMs = append(r.out.OOMs, one)
		r.name(len(r.out.OOMs) - 1)
		if k == 1 {
			oe = r.out.OOMs[len(r.out.OOMs)-1]
		}
	}
	close(r.oomNotify)
	r.oomNotify = make(chan struct{})
	return oe, false, true
}

// MaxOOMEvents is how many kills a trial's record keeps (each with what
// it killed and the container's processes then, up to ~17 KB); later ones
// are counted (OOMEventsDropped) and each step's kills still are
// (StepResult.OOMKills). A loop of kills under an agent's hours had grown
// a record past what a reader takes: 2,625 kills in 300 s, 45.6 MB.
const MaxOOMEvents = 100

func (r *recorder) name(i int) {
	if r.named != nil {
		r.named(i)
	}
}

// killedIn names the step a kill at `at` landed in: the running one, or,
// when the kill's notice came late (a loaded host: the step already
// closed), the recorded step whose time holds it, whose kill count it
// joins. Called with mu held.
func (r *recorder) killedIn(at time.Time) string {
	if at.IsZero() || !at.Before(r.stepStart) {
		return r.step
	}
	for i := len(r.out.Steps) - 1; i >= 0; i-- {
		s := &r.out.Steps[i]
		if !at.Before(s.Start) && !at.After(s.End) {
			s.OOMKills++
			r.lateKills++
			return s.Name
		}
	}
	return r.step
}

// stepOpen says whether the running step has not been closed yet (its
// result not yet among the trial's steps). Called with mu held.
func (r *recorder) stepOpen() bool {
	n := len(r.out.Steps)
	return n == 0 || r.out.Steps[n-1].Name != r.step || r.out.Steps[n-1].Start.Before(r.stepStart)
}

// running says which step runs (what a kill lands in) before its window
// opens: a traced script before its first command.
func (r *recorder) running(step string) {
	r.mu.Lock()
	r.step = step
	r.mu.Unlock()
}

// openStep starts a step's window: its peak, its time at the limit and
// faults, its kills counted from here. It returns the kills so far.
func (r *recorder) openStep(step string, at time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.step, r.stepPeak, r.stepStart, r.lateKills = step, 0, at, 0
	r.noCache.open()
	r.stepAtLimit, r.stepFaultsOpened, r.stepFaultsAtLimit = 0, false, 0
	return r.kills
}

// stopping keeps the kernel's peak read just before headroom stops a
// step's processes (the stop may take the cgroup, and the reading, with
// it).
func (r *recorder) stopping(kernelPeak int64) {
	r.mu.Lock()
	r.peakBeforeKill = kernelPeak
	r.mu.Unlock()
}

// closeStep fills in sr's telemetry since its openStep (killsBefore is
// what openStep returned; kernelPeak the step's own reading of the
// kernel's mark, 0 when none) and appends it to the record.
func (r *recorder) closeStep(sr *model.StepResult, kernelPeak int64, killsBefore int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.measure(sr, kernelPeak, killsBefore)
	r.out.Steps = append(r.out.Steps, *sr)
}

// closeLight fills in sr's telemetry since its openStep as closeStep
// does, without the kernel's mark (a traced command past the first
// TracedHeadSteps reads none), and does not append it: keepSteps does,
// for those kept.
func (r *recorder) closeLight(sr *model.StepResult, killsBefore int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.measure(sr, 0, killsBefore)
}

// keepSteps appends steps closeLight measured to the record.
func (r *recorder) keepSteps(srs ...model.StepResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sr := range srs {
		r.out.KernelPeakBytes = max(r.out.KernelPeakBytes, sr.KernelPeakBytes)
		r.out.Steps = append(r.out.Steps, sr)
	}
}

// measure fills in sr's telemetry; called with mu held.
func (r *recorder) measure(sr *model.StepResult, kernelPeak int64, killsBefore int) {
	if r.elsewhere != "" {
		// Its container's readings are its own (watchSeparate): none is
		// booked against the trial's limit, in the step or the trial.
		sr.Container = r.elsewhere
		r.peakBeforeKill = 0
		return
	}
	sr.KernelPeakBytes = max(kernelPeak, r.peakBeforeKill)
	r.peakBeforeKill = 0
	sr.KernelPeakNoCacheBytes = r.noCache.close(sr.KernelPeakBytes)
	r.out.KernelPeakNoCacheBytes = max(r.out.KernelPeakNoCacheBytes, sr.KernelPeakNoCacheBytes)
	r.out.KernelPeakBytes = max(r.out.KernelPeakBytes, sr.KernelPeakBytes)
	sr.PeakWorkingSetBytes = r.stepPeak
	sr.OOMKills = r.kills - killsBefore - r.lateKills
	sr.AtLimit = model.Duration(r.stepAtLimit)
	if r.stepFaultsOpened {
		sr.MajorFaults = r.stepFaultsLast - r.stepFaultsFirst
		atLimit := r.stepFaultsAtLimit
		sr.MajorFaultsAtLimit = &atLimit
	}
}

// awaitOOM waits, up to settle, for a kill beyond killsBefore: the
// kernel's notice can trail the killed process's exit by a few ms.
func (r *recorder) awaitOOM(killsBefore int, settle time.Duration) {
	deadline := time.NewTimer(settle)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		if r.kills > killsBefore {
			r.mu.Unlock()
			return
		}
		ch := r.oomNotify
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return
		}
	}
}

// runIn says the steps from now on run in another container (name; ""
// the trial's own again).
func (r *recorder) runIn(name string) {
	r.mu.Lock()
	r.elsewhere = name
	r.mu.Unlock()
}

// finish folds the engine's last word into the record once the readings
// have ended: a kill no live signal caught (a remote engine's), the
// sampling rate, the kernel's last mark. It returns the kills counted.
func (r *recorder) finish(final Final, end time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if final.OOMKilled && r.kills == 0 {
		r.kills = 1
		r.out.OOMs = append(r.out.OOMs, model.OOMEvent{At: end, Source: "inspect", WorkingSetBytes: r.lastWS})
	}
	r.out.Samples = r.samples
	if r.samples > 1 {
		if secs := r.lastAt.Sub(r.firstAt).Seconds(); secs > 0 {
			r.out.SampleRateHz = float64(r.samples-1) / secs
		}
	}
	if final.KernelPeakBytes > r.out.KernelPeakBytes {
		r.out.KernelPeakBytes = final.KernelPeakBytes
		r.out.KernelPeakNoCacheBytes = max(r.out.KernelPeakNoCacheBytes, r.noCache.afterLastStep(final.KernelPeakBytes))
	}
	return r.kills
}
