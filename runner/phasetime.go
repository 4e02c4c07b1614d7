package runner

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Phase timings: how a command's fixed cost and each trial's divide
// between start-up, the image check, create, attach, copy in, each step,
// the reward read and the remove (docs/PERFORMANCE.md's per-phase table).
// Off unless HEADROOM_TIMINGS names a file; then every timed phase appends
// one line to it:
//
//	<trial id or "-">\t<phase>\t<start µs since the process began>\t<duration µs>
//
// Off, a timed phase costs a nil check.

// TimingsEnv names the file phase timings are appended to.
const TimingsEnv = "HEADROOM_TIMINGS"

var timings = struct {
	once  sync.Once
	mu    sync.Mutex
	f     *os.File
	start time.Time
}{start: time.Now()}

func timingsFile() *os.File {
	timings.once.Do(func() {
		if path := os.Getenv(TimingsEnv); path != "" {
			timings.f, _ = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		}
	})
	return timings.f
}

// TimePhase starts timing one phase of trial ("" for the command's own)
// and returns the function that ends it.
func TimePhase(trial, phase string) func() {
	f := timingsFile()
	if f == nil {
		return func() {}
	}
	begin := time.Now()
	return func() {
		if trial == "" {
			trial = "-"
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%d\n", trial, phase, begin.Sub(timings.start).Microseconds(), time.Since(begin).Microseconds())
		timings.mu.Lock()
		_, _ = f.WriteString(line)
		timings.mu.Unlock()
	}
}
