package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// PressureDir is where the kernel's pressure-stall information lives
// (absent on kernels built without it, or booted with psi=0).
var PressureDir = "/proc/pressure"

// pressure is one reading of the host's cumulative stall totals, in
// microseconds.
type pressure struct {
	at                                time.Time
	cpuSome, memSome, memFull, ioSome int64
	ok                                bool
}

// readPressure reads /proc/pressure's cpu, memory and io totals; ok is
// false when the kernel offers none of them.
func readPressure() pressure {
	p := pressure{at: time.Now()}
	read := func(name string) (some, full int64, ok bool) {
		b, err := os.ReadFile(filepath.Join(PressureDir, name))
		if err != nil {
			return 0, 0, false
		}
		return psiTotal(b, "some"), psiTotal(b, "full"), true
	}
	var ok1, ok2, ok3 bool
	p.cpuSome, _, ok1 = read("cpu")
	p.memSome, p.memFull, ok2 = read("memory")
	p.ioSome, _, ok3 = read("io")
	p.ok = ok1 || ok2 || ok3
	return p
}

// psiTotal finds total= on the line starting with kind ("some" or "full").
func psiTotal(b []byte, kind string) int64 {
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || string(fields[0]) != kind {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := bytes.CutPrefix(f, []byte("total=")); ok {
				n, _ := strconv.ParseInt(string(v), 10, 64)
				return n
			}
		}
	}
	return 0
}

// noiseOver is the host's stall shares between two readings.
func noiseOver(a, b pressure) model.HostNoise {
	n := model.HostNoise{PSI: a.ok && b.ok}
	wall := b.at.Sub(a.at).Microseconds()
	if !n.PSI || wall <= 0 {
		return n
	}
	share := func(x, y int64) float64 { return min(max(float64(y-x)/float64(wall), 0), 1) }
	n.CPUSome, n.MemorySome, n.MemoryFull, n.IOSome = share(a.cpuSome, b.cpuSome), share(a.memSome, b.memSome), share(a.memFull, b.memFull), share(a.ioSome, b.ioSome)
	return n
}

// neighbourhood counts the sweep's running trials, so each can say how
// many others ran beside it at most, and whether one of them sat at its
// own memory limit meanwhile (markAtLimit): a trial re-reading its page
// cache at its limit stalls, and the host's memory pressure counts its
// stalls; a quiet trial beside it was recorded contended by "memory
// pressure 20%" and its own failure listed as the host's (3 of 3, the
// twenty-fourth attacker's 1).
type neighbourhood struct {
	mu      sync.Mutex
	running map[*int]struct{}
	// atLimit are the running trials seen at their memory limit;
	// beside are those that ran beside one of them.
	atLimit map[*int]string
	beside  map[*int]string
}

// join adds a trial; its counter holds the most others running beside it
// until leave.
func (n *neighbourhood) join() *int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.running == nil {
		n.running, n.atLimit, n.beside = map[*int]struct{}{}, map[*int]string{}, map[*int]string{}
	}
	mine := new(int)
	*mine = len(n.running)
	for other := range n.running {
		*other = max(*other, len(n.running))
	}
	for _, trial := range n.atLimit {
		n.beside[mine] = trial
		break
	}
	n.running[mine] = struct{}{}
	return mine
}

// markAtLimit says the running trial mine (trial, by its id) is at its
// memory limit: every trial running beside it now, or joining while it
// runs, ran beside a trial at its limit.
func (n *neighbourhood) markAtLimit(mine *int, trial string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, running := n.running[mine]; !running {
		return
	}
	if _, already := n.atLimit[mine]; already {
		return
	}
	n.atLimit[mine] = trial
	for other := range n.running {
		if _, said := n.beside[other]; other != mine && !said {
			n.beside[other] = trial
		}
	}
}

// leave removes a trial and returns the most neighbours it had, and the
// id of a trial beside it at its memory limit ("" when none was).
func (n *neighbourhood) leave(mine *int) (int, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.running, mine)
	delete(n.atLimit, mine)
	beside := n.beside[mine]
	delete(n.beside, mine)
	return *mine, beside
}

// hostOver follows the host's load and available memory over a trial,
// not only at its ends: a neighbour's burst in the middle of a long trial
// is what makes it contended. It is read on the trial's own samples (the
// monitor goroutine alone touches it), at most once a second; the host
// reading itself is cached and cheap.
type hostOver struct {
	lastAt   time.Time
	peakLoad float64
	minAvail int64
	readings int
}

// hostEvery is how often a trial reads the host while it runs.
const hostEvery = time.Second

// readIfDue reads the host when hostEvery has passed since its last
// reading (at is the sample's time); host nil reads nothing.
func (h *hostOver) readIfDue(at time.Time, host func() HostLoad) {
	if host == nil || (!h.lastAt.IsZero() && at.Sub(h.lastAt) < hostEvery) {
		return
	}
	h.lastAt = at
	l := host()
	h.peakLoad = max(h.peakLoad, l.Load1)
	if h.readings == 0 || l.AvailableBytes < h.minAvail {
		h.minAvail = l.AvailableBytes
	}
	h.readings++
}

// fold puts the readings, with the trial's start and end, into its noise
// record.
func (h *hostOver) fold(start, end HostLoad, n *model.HostNoise) {
	n.PeakLoad1 = max(h.peakLoad, start.Load1, end.Load1)
	n.MinAvailableBytes = min(start.AvailableBytes, end.AvailableBytes)
	if h.readings > 0 {
		n.MinAvailableBytes = min(n.MinAvailableBytes, h.minAvail)
	}
	n.HostReadings = h.readings
}

// fold adds the steps' CPU wait and the host's pressure over them to n.
func (s stepNoise) fold(n *model.HostNoise) {
	n.StepTime = model.Duration(s.wall)
	n.CPUWait, n.OwnCPUWait, n.CPUWaitKnown = model.Duration(s.wait), model.Duration(s.ownWait), s.waitOK
	if s.psiWall > 0 {
		n.StepCPUSome = min(max(float64(s.cpuSome)/float64(s.psiWall.Microseconds()), 0), 1)
	}
}
