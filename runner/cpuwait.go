package runner

import (
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// waitSplit divides a trial's CPU wait between the host and the trial as
// the readings come (model.SplitCPUWait over each interval between two
// readings of the wait and the CPU used), so that a step's share is the
// sum over its intervals. Split over a whole step at once, a task that
// burst past its cores and then idled was given the idle time's room:
// eight busy threads under cpus = 1 for 3 s, then a sleep, read as
// "waited 2.9s for a CPU (49%)", contended, where a one-thread twin beside
// it waited 4-87 ms (the twenty-first attacker's 4). Readings come with
// the backend's samples (event.Sample.CPUWaitNanos, about once a second)
// and at each step's ends; one older than the last is skipped. The
// readings are of one container's counters (of): a step in another (a
// separate verifier's, with counters of its own) is split over its whole
// span (trialRun.spanNoise), not given this split's readings, which it
// would move or be skipped by.
type waitSplit struct {
	mu       sync.Mutex
	of       any     // the sandbox whose counters these are
	cores    float64 // the trial's CPU limit (0: none)
	hostCPUs int
	read     bool
	at       time.Time
	wait     int64
	used     int64
	host     time.Duration
	own      time.Duration
}

// add takes a reading (the wait and the CPU used so far, at at) and
// returns the host's and the trial's wait so far.
func (w *waitSplit) add(wait, used int64, at time.Time) (host, own time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.read && (!at.After(w.at) || wait < w.wait || used < w.used) {
		return w.host, w.own
	}
	if w.read {
		h, o := model.SplitCPUWait(time.Duration(wait-w.wait), at.Sub(w.at), model.CPUUse{UsageNanos: used - w.used}, w.cores, w.hostCPUs)
		w.host += h
		w.own += o
	}
	w.read, w.at, w.wait, w.used = true, at, wait, used
	return w.host, w.own
}

// follows says whether sb's readings are the ones this split is of.
func (w *waitSplit) follows(sb any) bool {
	return w.of != nil && w.of == sb
}
