package docker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// destroyWait bounds the wait for a removed container's destroy event,
// which tells that its kill events have all arrived (the engine sends
// them in order); an engine whose events are lost only costs this once.
const destroyWait = 3 * time.Second

// chargeBatchBytes is how far below its limit a cgroup's usage can stop
// when a charge fails (the kernel charges 64 pages at a time).
const chargeBatchBytes = 64 * 4096

// stopWitness tells a kill headroom sent from one someone else sent
// (docker kill, stop, rm -f): the engine's kill events carry the signal,
// and a kill timed before headroom's own first kill is not headroom's.
type stopWitness struct {
	mu        sync.Mutex
	oursAt    time.Time // headroom's first kill or removal
	external  string    // the first signal someone else sent
	destroyed chan struct{}
	gone      bool
}

// ours marks headroom's own kill (or removal), from now on.
func (w *stopWitness) ours() {
	w.mu.Lock()
	if w.oursAt.IsZero() {
		w.oursAt = time.Now()
	}
	w.mu.Unlock()
}

// eventKill records a kill event: before headroom's own, it is someone else's.
func (s *sandbox) eventKill(at time.Time, signal string) {
	w := &s.stops
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.external != "" || (!w.oursAt.IsZero() && !at.Before(w.oursAt)) {
		return
	}
	w.external = signalName(signal)
}

func (s *sandbox) eventDestroy() {
	w := &s.stops
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.gone {
		w.gone = true
		close(w.destroyed)
	}
}

func (w *stopWitness) awaitDestroy(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.destroyed:
	case <-t.C:
	case <-ctx.Done():
	}
}

func (w *stopWitness) outside() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.external
}

// signalName reads an event's signal attribute: a number ("9") or a name.
func signalName(attr string) string {
	if n, err := strconv.Atoi(attr); err == nil {
		return model.SignalName(n)
	}
	if attr == "" {
		return "an unnamed signal"
	}
	if !strings.HasPrefix(attr, "SIG") {
		attr = "SIG" + attr
	}
	return attr
}

// limitHits reads how often the container's usage hit its own hard limit:
// v1 counts failed charges in memory.failcnt (and memory.memsw.failcnt,
// which a memory+swap limit equal to the limit hits first), and as some
// kernels leave those at 0, a peak (since the step began) within a charge
// batch of the limit counts one more; v2 counts memory.events' max. A kill
// with none was not the container's own limit.
func (r *cgroupReader) limitHits() (int64, bool) {
	if r.version == 2 {
		b, err := os.ReadFile(filepath.Join(r.memDir, "memory.events"))
		if err != nil {
			return 0, false
		}
		n, ok := flatKeyed(b, "max")
		return n, ok
	}
	var total int64
	known := false
	for _, name := range []string{"memory.failcnt", "memory.memsw.failcnt"} {
		if n, err := readInt(filepath.Join(r.memDir, name)); err == nil {
			total, known = total+n, true
		}
	}
	limit, errL := readInt(filepath.Join(r.memDir, "memory.limit_in_bytes"))
	peak, errP := readInt(filepath.Join(r.memDir, "memory.max_usage_in_bytes"))
	if errL == nil && errP == nil && limit < 1<<50 && peak >= limit-chargeBatchBytes {
		total++
	}
	return total, known
}

// pidsLimitHits reads the pids controller's count of refused forks
// (pids.events' max), v1 in the pids hierarchy beside the memory one,
// v2 in the container's own directory; 0 when unreadable.
func (r *cgroupReader) pidsLimitHits() int {
	dir := r.memDir
	if r.version == 1 {
		dir = pidsDirV1(r.memDir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pids.events"))
	if err != nil {
		return 0
	}
	n, _ := flatKeyed(b, "max")
	return int(n)
}

// pidsDirV1 is the pids hierarchy's directory of a v1 memory cgroup
// directory (…/memory/docker/<id> → …/pids/docker/<id>).
func pidsDirV1(memDir string) string {
	rel := filepath.Base(memDir)
	for d := filepath.Dir(memDir); d != "/" && d != "."; d = filepath.Dir(d) {
		if filepath.Base(d) == "memory" {
			return filepath.Join(filepath.Dir(d), "pids", rel)
		}
		rel = filepath.Join(filepath.Base(d), rel)
	}
	return memDir
}
