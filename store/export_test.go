package store

// Crash lets the experiment go as a killed headroom does: the lock dies
// with its holder (its file closed by the kernel, nothing else done:
// no records flushed, no manifest written). Tests of crash recovery
// call it before they open the experiment again in the same process,
// where the crashed Experiment's lock would otherwise still be held
// until the collector happened to close its file.
func (e *Experiment) Crash() {
	if e.lock != nil && e.lock.f != nil {
		e.lock.f.Close()
		e.lock.f = nil
	}
}
