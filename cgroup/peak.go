package cgroup

import (
	"os"
	"path/filepath"
	"sync"
)

// Exact peaks at any sampling rate. A sample is an instant: a spike
// shorter than the sampling period, or one that falls in a late tick's
// gap, is not in any sample. The kernel keeps a high-water mark that can
// be reset — v1 memory.max_usage_in_bytes (a write of 0 sets it to the
// current usage), v2 memory.peak (since Linux 6.12 a write to an open
// memory.peak resets the peak that file descriptor reports). Read and
// reset at every sample, each sample carries the true maximum since the
// sample before, however late the tick.

// Peak modes: how a reader's samples carry the kernel's high-water mark
// (recorded per trial).
const (
	// PeakReset: the mark is read and reset at every sample, so
	// Reading.PeakBytes is the exact maximum since the previous reading.
	PeakReset = "kernel-reset"
	// PeakSamples: the mark cannot be reset here (cgroup v2 before Linux
	// 6.12): a sample is only its instant (Reading.PeakBytes is 0).
	PeakSamples = "samples"
)

// peakMark is a cgroup's resettable high-water mark, kept open.
type peakMark struct {
	mu sync.Mutex // the sampler's reading and a step's TakePeak
	f  *cgFile
	v2 bool
	// plain: the file is not the kernel's (a test's stand-in on an
	// ordinary file system), so a reset rewrites it whole, as reading the
	// kernel's mark after a reset would show it.
	plain bool
	buf   [32]byte
	high  int64 // the largest mark read since the last TakePeak
	// pending is what a TakePeak took since the last reading: the next
	// reading's interval holds it too.
	pending int64
}

// openPeak opens dir's high-water mark read-write; nil when it cannot be
// reset. v1's can always be (its first reading is the peak since the
// cgroup was made); v2's is reset once here, which is also the test that
// this kernel lets it be (Linux 6.12 and later).
func openPeak(version int, dir string) *peakMark {
	name := "memory.max_usage_in_bytes"
	if version == 2 {
		name = "memory.peak"
	}
	f, err := openCgFileMode(filepath.Join(dir, name), os.O_RDWR)
	if err != nil {
		return nil
	}
	p := &peakMark{f: f, v2: version == 2, plain: !onCgroupFS(f.f)}
	if p.v2 && p.reset() != nil {
		f.close()
		return nil
	}
	return p
}

func (p *peakMark) reset() error {
	// v1 takes a number (0: start again from the current usage); v2 any
	// non-empty string, for this descriptor alone.
	err := p.f.writeAt0([]byte("0\n"))
	if err == nil && p.plain {
		err = p.f.f.Truncate(2)
	}
	return err
}

// take reads the mark and resets it: the maximum since the last take.
// Called with p.mu held.
func (p *peakMark) take() (int64, bool) {
	n, _ := p.f.readAt0(p.buf[:])
	if n == 0 {
		return 0, false
	}
	v, perr := ParseInt(p.buf[:n])
	if perr != nil {
		return 0, false
	}
	_ = p.reset()
	return v, true
}

// sample takes the mark for one reading: the interval's (what a step's
// TakePeak took since the last reading included) and the step's own (since
// the later of the last reading and the last TakePeak), which alone goes
// into the step's high. What a TakePeak took belongs to the step it
// closed: carried into the next step's high, a step killed at its limit
// made the verifier after it "need" the limit too (issue #39).
func (p *peakMark) sample() (interval, own int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.take()
	if !ok {
		return 0, 0
	}
	p.high = max(p.high, v)
	interval, p.pending = max(v, p.pending), 0
	return interval, v
}

// step returns the largest mark since the last step call and starts again.
func (p *peakMark) step() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.take()
	if !ok && p.high == 0 {
		return 0, false
	}
	p.pending = max(p.pending, v)
	v = max(v, p.high)
	p.high = 0
	return v, true
}

func (p *peakMark) close() { p.f.close() }

// PeakMode says how this reader's samples carry the kernel's peak.
func (r *Reader) PeakMode() string {
	if r.peak != nil {
		return PeakReset
	}
	return PeakSamples
}
