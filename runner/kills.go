package runner

import "github.com/headroom-eval/headroom/model"

// KillCount is a sandbox's count of OOM kills merged from several sources
// (the engine's events, the cgroup's counter, the kernel's log, a pod's
// status): each source reports the kills it has seen, and the total is the
// largest any one of them has seen, so one kill seen twice counts once.
type KillCount struct{ count int }

// Seen takes the largest count any source has seen now, and whether the
// kill came with what was killed (the kernel's log names it). It says what
// to signal: a new total, or the old one again when a kill already counted
// from a faster source now has a name to pass on; ok is false when there
// is nothing new.
func (k *KillCount) Seen(largest int, named bool) (count int, ok bool) {
	if largest <= k.count {
		return k.count, named && k.count > 0
	}
	k.count = largest
	return largest, true
}

// Count is the total so far.
func (k *KillCount) Count() int { return k.count }

// KillSignals is what a sandbox sends for one signal once its sources
// count sig.Count kills (before: the count before it). words, for the
// kernel's log's word on a kill (0 for any other signal), is how many
// kills the log has described, this one the last: it reports them one at
// a time, in their order. Where the count is already past it (a counter
// that read several kills before the log's first report was read), the
// new count goes first without a word and the word to its own kill: put
// on the count's last kill, it named a step driver's kill after the
// task's bash and left the driver's kill without the kernel's figures.
func KillSignals(sig OOMSignal, before, words int) []OOMSignal {
	if words <= 0 || words >= sig.Count {
		return []OOMSignal{sig}
	}
	var out []OOMSignal
	if sig.Count != before {
		out = append(out, OOMSignal{Time: sig.Time, Source: sig.Source, Count: sig.Count})
	}
	sig.Count = words
	return append(out, sig)
}

// OOMEvent is the record of a new kill from its signal: the step it
// landed in, the last sampled working set and tmpfs pages, and the
// kernel's figures at the kill where the signal carries them (the
// monitor's record of each kill).
func OOMEvent(o OOMSignal, step string, lastWS, lastShmem int64) model.OOMEvent {
	return model.OOMEvent{At: o.Time, Step: step, Source: o.Source, WorkingSetBytes: lastWS, ShmemBytes: lastShmem, Process: o.Process, PID: o.PID, RSSBytes: o.RSSBytes, KernelUsageBytes: o.UsageBytes, KernelShmemBytes: o.ShmemBytes, Driver: o.Driver, RaisedScoreAdj: o.RaisedScoreAdj}
}

// FillKill fills in, from a later signal of a kill already recorded (the
// kernel's log after a faster source), what the record lacks: what was
// killed, the kernel's figure at the kill, and the backend's word that
// it took the step driver (never onto another process's kill: a word
// whose pid is not the record's). False when it had them.
func FillKill(oe *model.OOMEvent, o OOMSignal) bool {
	filled := false
	if o.Driver && !oe.Driver && (o.PID == 0 || oe.PID == 0 || oe.PID == o.PID) {
		oe.Driver = true
		filled = true
	}
	if oe.Process == "" && o.Process != "" {
		oe.Process, oe.PID, oe.RSSBytes = o.Process, o.PID, o.RSSBytes
		filled = true
	}
	if oe.RaisedScoreAdj == nil && o.RaisedScoreAdj != nil && oe.PID == o.PID {
		oe.RaisedScoreAdj = o.RaisedScoreAdj
		filled = true
	}
	if oe.KernelUsageBytes == 0 && o.UsageBytes > 0 {
		oe.KernelUsageBytes, oe.KernelShmemBytes = o.UsageBytes, o.ShmemBytes
		filled = true
	}
	return filled
}
