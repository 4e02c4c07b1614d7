package docker

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"
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
	extAt     time.Time // and when
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
	w.external, w.extAt = signalName(signal), at
}

func (w *stopWitness) outsideAt() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.extAt
}

// shutdownWindow is how soon after a kill the event stream must break
// for the kill to be the engine's own shutdown (its stop timeout, 15 s
// by default, and some slack).
const shutdownWindow = 30 * time.Second

// shutdownWait bounds the wait, after a kill someone sent with a signal
// other than SIGKILL, for the event stream to break: the engine shutting
// down sends the stop signal first and logs a stop, just as `docker stop`
// does; only the engine then goes away (after its stop timeout, 15 s by
// default). So a `docker stop` by someone is recorded this much later.
const shutdownWait = 20 * time.Second

// shutdownKill says whether the outside kill w saw was the engine's own
// shutdown (it went away just after): a restart, not someone's kill.
// SIGKILL first is never a shutdown's and is decided at once.
func (b *Backend) shutdownKill(ctx context.Context, w *stopWitness) bool {
	w.mu.Lock()
	at, sig := w.extAt, w.external
	w.mu.Unlock()
	deadline := time.NewTimer(shutdownWait)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		broke, notify := b.brokeAfter(at), b.brokeNotify
		b.mu.Unlock()
		if broke || sig == "SIGKILL" {
			return broke
		}
		select {
		case <-notify:
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// brokeAfter says whether the event stream broke (the engine went away)
// within shutdownWindow after at.
// Called with b.mu held.
func (b *Backend) brokeAfter(at time.Time) bool {
	return !b.streamBroke.Before(at.Add(-time.Second)) && b.streamBroke.Sub(at) <= shutdownWindow
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

// DefaultEngineWait is how long a trial waits, at most, for an engine
// that went away (a restart) to answer again before its start or removal
// is given up as an infrastructure error (Options.EngineWait).
const DefaultEngineWait = 60 * time.Second

// unreachable says whether err is the engine not answering at all (its
// socket refused or gone), as opposed to an answer.
func unreachable(err error) bool {
	var op *net.OpError
	return client.IsErrConnectionFailed(err) || (errors.As(err, &op) && op.Op == "dial")
}

// retryEngine runs call, and while it fails because the engine cannot be
// reached (a restart under a sweep), waits for the engine with backoff
// and runs it again: the sweep finishes the rest instead of failing every
// trial queued behind the restart. A healthy call costs nothing more.
func (b *Backend) retryEngine(ctx context.Context, call func() error) error {
	err := call()
	if err == nil || !unreachable(err) {
		return err
	}
	deadline := time.Now().Add(b.opts.EngineWait)
	wait := 250 * time.Millisecond
	for time.Now().Before(deadline) {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
		if _, perr := b.cli.Ping(ctx); perr != nil {
			continue
		}
		if err = call(); err == nil || !unreachable(err) {
			return err
		}
	}
	return err
}
