package model

import "fmt"

// MemoryFailure is how a trial failed at its own memory limit: killed by
// it, stalled at it until its time ran out, or neither. It is the one
// notion every headline, colour, legend, calibration, comparison and
// prediction counts, so that "failed at the limit" reads the same
// everywhere.
type MemoryFailure int

// Memory failures.
const (
	NoMemoryFailure MemoryFailure = iota
	KilledAtLimit
	StalledAtLimit
)

// MemoryFailureOf is the memory failure an outcome and its cause make: an
// OOM kill that ended the trial (a kill under its own limit is an infra
// error from outside, and a kill it survived is a pass), or a timeout
// judged a stall at the limit.
func MemoryFailureOf(o Outcome, c Cause) MemoryFailure {
	switch {
	case o == OOMKilled:
		return KilledAtLimit
	case c == CauseStalled && !o.Success() && o.Counted():
		return StalledAtLimit
	}
	return NoMemoryFailure
}

// MemoryFailure is the trial's memory failure.
func (r TrialResult) MemoryFailure() MemoryFailure { return MemoryFailureOf(r.Outcome, r.Cause) }

// ReachedLimit says whether the trial's memory reached its own hard
// limit: it failed there (MemoryFailure), or its kernel peak came to the
// limit, or a timed-out step spent time at it though not enough for a
// stall. A failure that reached its limit is the limit's whatever the
// host's load (runs whose working set sat at 319–320 of 320 MiB when time
// ran out were listed as the host's).
func (r TrialResult) ReachedLimit() bool {
	limit := r.Policy.HardLimitBytes
	switch {
	case limit <= 0:
		return false
	case r.MemoryFailure().Failed():
		return true
	case r.Stall != nil && r.Stall.AtLimit > 0:
		return true
	}
	return r.KernelPeakBytes >= limit-OwnLimitSlackBytes || float64(r.PeakWorkingSetBytes) >= StallLevel*float64(limit)
}

// Failed says whether there was one.
func (m MemoryFailure) Failed() bool { return m != NoMemoryFailure }

// String is "killed", "stalled" or "".
func (m MemoryFailure) String() string {
	switch m {
	case KilledAtLimit:
		return "killed"
	case StalledAtLimit:
		return "stalled"
	}
	return ""
}

// MemoryFailures tallies memory failures over counted trials.
type MemoryFailures struct {
	Counted int `json:"counted"`
	Killed  int `json:"killed"`
	Stalled int `json:"stalled"`
}

// Add records one trial's outcome and cause (cancelled ones are not
// counted).
func (m *MemoryFailures) Add(o Outcome, c Cause) {
	if !o.Counted() {
		return
	}
	m.Counted++
	switch MemoryFailureOf(o, c) {
	case KilledAtLimit:
		m.Killed++
	case StalledAtLimit:
		m.Stalled++
	}
}

// AddTrial records one trial.
func (m *MemoryFailures) AddTrial(t TrialResult) { m.Add(t.Outcome, t.Cause) }

// Failed is killed plus stalled.
func (m MemoryFailures) Failed() int { return m.Killed + m.Stalled }

// Rate is the memory-failure rate (0 when nothing counted).
func (m MemoryFailures) Rate() float64 { return ratio(m.Failed(), m.Counted) }

// Split is the killed / stalled split in words: "3 killed, 4 stalled",
// "3 killed", "" when none.
func (m MemoryFailures) Split() string {
	switch {
	case m.Killed > 0 && m.Stalled > 0:
		return fmt.Sprintf("%d killed, %d stalled", m.Killed, m.Stalled)
	case m.Stalled > 0:
		return fmt.Sprintf("%d stalled", m.Stalled)
	case m.Killed > 0:
		return fmt.Sprintf("%d killed", m.Killed)
	}
	return ""
}

// String is "7/20 (3 killed, 4 stalled)", "2/6 (2 killed)", or "0/20".
func (m MemoryFailures) String() string {
	s := fmt.Sprintf("%d/%d", m.Failed(), m.Counted)
	if sp := m.Split(); sp != "" {
		s += " (" + sp + ")"
	}
	return s
}

// OutcomeWord is a trial's outcome in a word, with a stall named as one:
// "stalled", not "timeout".
func (r TrialResult) OutcomeWord() string {
	if r.MemoryFailure() == StalledAtLimit {
		return "stalled"
	}
	return string(r.Outcome)
}

// Compact is the tally in a matrix column's width: "7/20 3K 4L" (the
// killed and stalled glyphs), "0/20".
func (m MemoryFailures) Compact() string {
	s := fmt.Sprintf("%d/%d", m.Failed(), m.Counted)
	if m.Killed > 0 {
		s += fmt.Sprintf(" %d%s", m.Killed, OOMKilled.Glyph())
	}
	if m.Stalled > 0 {
		s += fmt.Sprintf(" %d%s", m.Stalled, CauseStalled.Glyph())
	}
	return s
}
