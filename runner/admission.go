package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// admission makes guarantees real on one host: a trial starts only when
// its guarantee fits beside the guarantees already running, and no more
// than maxRunning trials run at once.
type admission struct {
	// host and floor pause admissions while the host itself is short of
	// memory: the host must not become the noise it measures.
	host  func() HostLoad
	floor int64

	mu         sync.Mutex
	capacity   int64 // bytes guarantees may sum to
	reserved   int64
	running    int
	maxRunning int
	held       string        // why no trial may start ("": none held)
	changed    chan struct{} // closed and replaced on every release
}

func newAdmission(capacity int64, maxRunning int) *admission {
	return &admission{capacity: capacity, maxRunning: maxRunning, changed: make(chan struct{})}
}

// acquire blocks until the guarantee fits and a slot is free. waiting is
// called (once per distinct reason) while it is held back.
func (a *admission) acquire(ctx context.Context, guarantee int64, waiting func(reason string)) error {
	last := ""
	for {
		var pressure string
		if a.host != nil && a.floor > 0 {
			if h := a.host(); h.AvailableBytes > 0 && h.AvailableBytes < a.floor {
				pressure = fmt.Sprintf("paused: host memory under pressure (%s available, floor %s)", model.FormatBytes(h.AvailableBytes), model.FormatBytes(a.floor))
			}
		}
		a.mu.Lock()
		var reason string
		switch {
		case a.held != "":
			reason = "held: " + a.held
		case pressure != "":
			reason = pressure
		case a.running >= a.maxRunning:
			reason = fmt.Sprintf("waiting for a slot (%d of %d running)", a.running, a.maxRunning)
		case a.reserved+guarantee > a.capacity:
			reason = fmt.Sprintf("waiting for guaranteed memory: needs %s, %s of %s free",
				model.FormatBytes(guarantee), model.FormatBytes(a.capacity-a.reserved), model.FormatBytes(a.capacity))
		default:
			a.reserved += guarantee
			a.running++
			a.mu.Unlock()
			return nil
		}
		ch := a.changed
		a.mu.Unlock()
		// Once per kind of reason: its figures move every look (the
		// memory available), and a trial paused for a minute recorded
		// a pause every half second (the twenty-ninth attacker's 3).
		if kind, _, _ := strings.Cut(reason, " ("); kind != last && waiting != nil {
			waiting(reason)
			last = kind
		}
		// Host pressure ends outside our knowledge: look again shortly.
		var recheck <-chan time.Time
		if pressure != "" {
			recheck = time.After(500 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-recheck:
		}
	}
}

func (a *admission) release(guarantee int64) {
	a.mu.Lock()
	a.reserved -= guarantee
	a.running--
	a.wake()
	a.mu.Unlock()
}

// hold stops (why != "") or lets go (why == "") every start: the trials
// running go on, the queued wait, saying why.
func (a *admission) hold(why string) {
	a.mu.Lock()
	a.held = why
	a.wake()
	a.mu.Unlock()
}

// wake tells every waiting acquire to look again; a.mu is held.
func (a *admission) wake() {
	close(a.changed)
	a.changed = make(chan struct{})
}
