package runner

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
