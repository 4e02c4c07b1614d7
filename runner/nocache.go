package runner

import (
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// noCachePeak follows the kernel's peak less reclaimable cache over a
// step (model.KernelPeakNoCache): per sampling interval where the samples
// carry the kernel's mark (peak mode kernel-reset), and for a mark the
// step's own reading adds (a spike after the last sample, or a backend
// whose samples carry none, the Kubernetes probe's), that mark less the
// least cache the step's samples saw. Guarded by trialRun.mu.
type noCachePeak struct {
	lastCache, minCache int64
	haveLast, haveMin   bool
	// est is the step's largest figure so far; markMax the largest mark
	// its samples carried.
	est, markMax int64
}

// sample takes one reading.
func (p *noCachePeak) sample(s event.Sample) {
	cache := max(s.UsageBytes-s.WorkingSetBytes, 0)
	// The step's own part of the interval's mark: what the closed step's
	// reading took is not this step's.
	mark := s.PeakBytes
	if s.StepPeakBytes > 0 {
		mark = s.StepPeakBytes
	}
	if mark > 0 {
		before := cache
		if p.haveLast {
			before = p.lastCache
		}
		p.est = max(p.est, model.KernelPeakNoCache(mark, before, cache, s.UsageBytes))
		p.markMax = max(p.markMax, mark)
	}
	if !p.haveMin || cache < p.minCache {
		p.minCache, p.haveMin = cache, true
	}
	p.lastCache, p.haveLast = cache, true
}

// open starts a step: its window's cache starts at the last reading's.
func (p *noCachePeak) open() {
	p.est, p.markMax = 0, 0
	p.minCache, p.haveMin = p.lastCache, p.haveLast
}

// close is the step's figure given its own reading of the kernel's mark
// (0: none); 0 when nothing is known (no samples). A mark above the
// samples' is from after the last sample where they carry marks (less the
// cache then), from anywhere in the step where they carry none (less the
// least cache the step saw).
func (p *noCachePeak) close(mark int64) int64 {
	if mark > p.markMax && p.haveMin {
		cache := p.minCache
		if p.markMax > 0 {
			cache = p.lastCache
		}
		p.est = max(p.est, model.KernelPeakNoCache(mark, cache, cache, 0))
	}
	return p.est
}

// afterLastStep is the figure for a mark read after the last step (the
// record's last reading): that mark less the last reading's cache; 0
// unknown.
func (p *noCachePeak) afterLastStep(mark int64) int64 {
	if !p.haveLast {
		return 0
	}
	return model.KernelPeakNoCache(mark, p.lastCache, p.lastCache, 0)
}
