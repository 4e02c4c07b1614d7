package runner

import (
	"fmt"
	"sync"
	"time"
)

// freezeGap is how long past its tick the freeze watch must wake for
// headroom to count as stopped (SIGSTOP, a suspended VM, a host that did
// not schedule it): far above any scheduling delay a busy host gives a
// 200 ms ticker.
const freezeGap = 3 * time.Second

// freezeWatch notes the spans in which headroom itself did not run: a
// ticker that wakes far later than asked was stopped in between. Trials
// whose time limit ran out across such a span had time they were not
// given watched (and, with a SIGSTOP, their steps' output not read).
type freezeWatch struct {
	mu    sync.Mutex
	spans [][2]time.Time // the latest spans, oldest first
}

var (
	freezes     freezeWatch
	freezesOnce sync.Once
)

// watchFreezes starts the process's freeze watch, once.
func watchFreezes() {
	freezesOnce.Do(func() {
		go func() {
			const tick = 200 * time.Millisecond
			last := time.Now()
			for range time.Tick(tick) {
				now := time.Now()
				if gap := now.Sub(last); gap > freezeGap {
					freezes.add(last, now)
				}
				last = now
			}
		}()
	})
}

func (w *freezeWatch) add(from, to time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.spans = append(w.spans, [2]time.Time{from, to})
	if len(w.spans) > 64 {
		w.spans = w.spans[len(w.spans)-64:]
	}
}

// during says how long headroom was stopped between from and to ("" for
// not at all).
func (w *freezeWatch) during(from, to time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var d time.Duration
	for _, s := range w.spans {
		a, b := max(s[0].UnixNano(), from.UnixNano()), min(s[1].UnixNano(), to.UnixNano())
		if b > a {
			d += time.Duration(b - a)
		}
	}
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf("headroom itself was stopped (SIGSTOP, or not scheduled) for %s", d.Round(100*time.Millisecond))
}
