package store

// Crash lets the experiment go as a killed headroom does: the lock dies
// with its holder (its file closed by the kernel, nothing else done:
// no records flushed, no manifest written). Tests of crash recovery
// call it before they open the experiment again in the same process,
// where the crashed Experiment's lock would otherwise still be held
// until the collector happened to close its file.
func (e *Experiment) Crash() {
	if e.lock == nil {
		return
	}
	// The lock is held on the directory's handle (LockExperiment): that is
	// what a death closes. Closing the file alone left the lock held
	// until the collector closed the handle, and the test's next Open was
	// refused as "being written by" its own pid when it had not yet.
	if e.lock.f != nil {
		e.lock.f.Close()
		e.lock.f = nil
	}
	if e.lock.dir != nil {
		e.lock.dir.Close()
		e.lock.dir = nil
	}
}
