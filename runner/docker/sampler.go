package docker

import (
	"sync"
	"time"

	"github.com/headroom-eval/headroom/event"
)

// sampler reads every running trial on one shared tick: the cgroup files
// (the memory sampler, 20 Hz) or the processes (the process watch,
// 10 Hz). One timer and one wake-up per period for all trials, instead of
// one per trial: with 8 trials at 20 Hz the wake-ups themselves (the Go
// scheduler parking and waking threads, futex calls) cost headroom more
// than the reads (docs/PERFORMANCE.md). The tick runs only while some
// trial is sampled.
type sampler struct {
	every time.Duration
	// read reads one trial; false when there is nothing left to read
	// (the cgroup has gone) and the trial leaves the set. Called with the
	// sampler's lock held, never concurrently.
	read func(sb *sandbox, now time.Time) bool

	mu  sync.Mutex
	set map[*sandbox]struct{}

	wake chan struct{} // a trial joined an empty set
	stop <-chan struct{}
}

func newSampler(every time.Duration, read func(*sandbox, time.Time) bool, stop <-chan struct{}) *sampler {
	s := &sampler{every: every, read: read, set: map[*sandbox]struct{}{}, wake: make(chan struct{}, 1), stop: stop}
	go s.loop()
	return s
}

// add reads sb once now and then on every tick until remove.
func (s *sampler) add(sb *sandbox) {
	now := time.Now()
	s.mu.Lock()
	if s.read(sb, now) {
		s.set[sb] = struct{}{}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// remove stops sampling sb; no sample is sent to it after remove returns.
func (s *sampler) remove(sb *sandbox) {
	s.mu.Lock()
	delete(s.set, sb)
	s.mu.Unlock()
}

func (s *sampler) loop() {
	for {
		select {
		case <-s.wake:
		case <-s.stop:
			return
		}
		tick := time.NewTicker(s.every)
		for s.round(time.Now()) > 0 {
			select {
			case <-tick.C:
			case <-s.stop:
				tick.Stop()
				return
			}
		}
		tick.Stop()
	}
}

// round samples every trial once and returns how many are still sampled.
func (s *sampler) round(now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sb := range s.set {
		if !s.read(sb, now) {
			// The cgroup goes when the container exits.
			delete(s.set, sb)
		}
	}
	return len(s.set)
}

// sampleOnce reads sb's cgroup and hands on the sample; false when the
// cgroup is gone. Called with the sampler's lock held, never concurrently.
func (sb *sandbox) sampleOnce(time.Time) bool {
	m, err := sb.cg.Read()
	if err != nil {
		return false
	}
	// The sample is of the instant its files were read, not of the
	// round's start: one round reads every trial in turn, which at 32
	// trials on a loaded host takes tens of milliseconds, and a sample
	// stamped before its read puts the kernel's mark (everything up to
	// the read) in the interval before, and a step's last peak in the step
	// before its end.
	now := time.Now()
	if m.OOMKills > 0 {
		sb.signal(now, "cgroup", func() { sb.cgroupKills = max(sb.cgroupKills, m.OOMKills) })
	}
	ws := max(m.Usage-m.InactiveFile, 0)
	sm := event.Sample{Time: now, UsageBytes: m.Usage, WorkingSetBytes: ws, CacheBytes: m.Usage - ws, PeakBytes: m.PeakBytes, StepPeakBytes: m.StepPeakBytes, MajorFaults: m.MajorFaults, ShmemBytes: m.Shmem, CPU: m.CPU}
	if !sb.lastAt.IsZero() && m.CPU.UsageNanos > 0 {
		sm.CPUCores = float64(m.CPU.UsageNanos-sb.lastCPU) / float64(now.Sub(sb.lastAt).Nanoseconds())
	}
	sb.lastCPU, sb.lastAt = m.CPU.UsageNanos, now
	// The threads' CPU wait, about once a second: a thread that lives
	// between two step ends is seen while it lives.
	if sb.waitMu.TryLock() {
		if now.Sub(sb.waitAt) >= time.Second {
			sm.CPUWaitNanos, sm.CPUWaitRead = sb.wait.Read(sb.cg)
			sb.checkLimit()
			sb.waitAt = now
		}
		sb.waitMu.Unlock()
	}
	// Never block the other trials' sampling on one trial's reader: the
	// runner reads promptly, and the buffer holds seconds of samples.
	select {
	case sb.samples <- sm:
	default:
		sb.dropped++
	}
	return true
}
