package workload

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload/wire"
)

// MarkerDir holds the files Writes and Requires name.
const MarkerDir = "/work/.headroom"

// markerDir is MarkerDir, moved aside by tests that run steps on the host.
var markerDir = MarkerDir

// SeedEnv carries the trial's seed into every step.
const SeedEnv = "HEADROOM_SEED"

// Main runs the workload with the given arguments (without the program
// name) and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: hr-workload idle | drive | probe [--every 50ms] | copy-self DIR | env NAME=VALUE... -- ARGV... | as [--keep-home] USER -- ARGV... | gate -- ARGV... | run --step NAME --profile JSON | term start|keys|exec | child --mb N --ms N | netshape | neighbour | serve | rtt | fetch | upload | directio")
		return 2
	}
	switch args[0] {
	case wire.IdleMode:
		return idle()
	case DriveMode:
		return drive(os.Stdin, stdout, stderr)
	case ProbeMode:
		return runProbe(args[1:], os.Stdin, stdout, stderr)
	case CopySelfMode:
		return copySelf(args[1:], stderr)
	case UntarMode:
		return untar(args[1:], os.Stdin, stderr)
	case CatMode:
		return cat(args[1:], stdout, stderr)
	case EnvMode:
		return runEnv(args[1:], stderr)
	case AsMode:
		return runAs(args[1:], stderr)
	case GateMode:
		return gate(args[1:], stderr)
	case NetPolicyMode:
		return netPolicy(args[1:], stdout, stderr)
	case NetShapeMode:
		return netShape(args[1:], stdout, stderr)
	case NeighbourMode:
		return neighbour(args[1:], stdout, stderr)
	case wire.ServeMode:
		return serve(args[1:], stdout, stderr)
	case RTTMode:
		return rttProbe(args[1:], stdout, stderr)
	case FetchMode:
		return fetchProbe(args[1:], stdout, stderr)
	case UploadMode:
		return uploadProbe(args[1:], stdout, stderr)
	case DirectIOMode:
		return directIOProbe(args[1:], stdout, stderr)
	case FloodMode:
		return floodProbe(args[1:], stdout, stderr)
	case TermMode:
		return term(args[1:], stdout, stderr)
	case wire.RunMode:
		return runStep(args[1:], stdout, stderr)
	case StepMode:
		return stepExec(args[1:], stderr)
	case "child":
		return child(args[1:])
	}
	fmt.Fprintf(stderr, "hr-workload: unknown mode %q\n", args[0])
	return 2
}

// idle is PID 1: it waits for the end of the container.
func idle() int {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
	return 0
}

// memory holds allocated, touched pages.
type memory struct{ chunks [][]byte }

func (m *memory) grow(mib float64) {
	n := int(mib * float64(1<<20))
	for n > 0 {
		size := min(n, 1<<20)
		b := make([]byte, size)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		m.chunks = append(m.chunks, b)
		n -= size
	}
}

func (m *memory) mib() float64 {
	var n int
	for _, c := range m.chunks {
		n += len(c)
	}
	return float64(n) / float64(1<<20)
}

func (m *memory) release() {
	m.chunks = nil
	debug.FreeOSMemory()
}

func seededRand(step string) *rand.Rand {
	seed, _ := strconv.ParseUint(os.Getenv(SeedEnv), 10, 64)
	h := fnv.New64a()
	h.Write([]byte(step))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

func runStep(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(wire.RunMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	step := fs.String("step", "step", "step name")
	raw := fs.String("profile", "{}", "profile as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var p wire.Profile
	if err := json.Unmarshal([]byte(*raw), &p); err != nil {
		fmt.Fprintf(stderr, "hr-workload: bad profile: %v\n", err)
		return 2
	}
	if err := p.Validate(); err != nil {
		fmt.Fprintf(stderr, "hr-workload: bad profile: %v\n", err)
		return 2
	}
	rng := seededRand(*step)
	jitter := func(x float64) float64 { return x * (1 + (rng.Float64()*2-1)*p.JitterPct/100) }
	out := newScript(p, rng)

	for _, req := range p.Requires {
		if _, err := os.Stat(filepath.Join(markerDir, req)); err != nil {
			for _, l := range out.missing(req) {
				fmt.Fprintln(stdout, l)
			}
			return 1
		}
	}
	willFail := rng.Float64() < p.FailChance
	if p.NeedsRoomMB > 0 {
		if limit, err := cgroupFile("memory.max", "memory.limit_in_bytes"); err == nil && limit > 0 && limit < 1<<50 && float64(limit) < p.NeedsRoomMB*(1<<20) {
			fmt.Fprintf(stdout, "only %d MiB of room (the heavy approach wants %.0f): taking the lean approach\n", limit>>20, p.NeedsRoomMB)
			fmt.Fprintln(stdout, "FAILED tests/test_outputs.py::test_accuracy - approximate solution: 0.81 < 0.95")
			return 1
		}
	}
	if p.FillDir != "" {
		if code := fillDir(p.FillDir, p.FillMB, stdout, stderr); code != 0 {
			return code
		}
	}

	if code := knobWork(p, stdout, stderr); code != 0 {
		return code
	}
	if p.CPUWorkMS > 0 {
		wait0 := runDelay()
		took := doCPUWork(time.Duration(p.CPUWorkMS)*time.Millisecond, max(p.CPUThreads, 1))
		// What the CPU was like in here: the cores this work got, and how
		// long its threads waited for one (the run queue's delay).
		fmt.Fprintln(stdout, model.FormatMeasure("cpu_obtained", float64(p.CPUWorkMS)/1000/took.Seconds(), "cores"))
		if w0, w1 := wait0, runDelay(); w0 >= 0 && w1 >= w0 {
			fmt.Fprintln(stdout, model.FormatMeasure("cpu_wait", float64(w1-w0)/float64(time.Millisecond), "ms"))
		}
		budget := time.Duration(p.DeadlineMS) * time.Millisecond
		if budget > 0 && took > budget {
			fmt.Fprintf(stdout, "FAILED test_within_deadline - %d ms of CPU work took %.2fs, over its %.2fs deadline\n", p.CPUWorkMS, took.Seconds(), budget.Seconds())
			return 1
		}
		fmt.Fprintf(stdout, "%d ms of CPU work done in %.2fs\n", p.CPUWorkMS, took.Seconds())
	}

	duration := time.Duration(p.DurationMS) * time.Millisecond
	rampPct := p.RampPct
	if rampPct <= 0 {
		rampPct = 30
	}
	ramp := time.Duration(float64(duration) * rampPct / 100)
	base := jitter(p.BaseMB)

	if p.CPUFraction > 0 {
		go burn(p.CPUFraction)
	}

	var childResult struct {
		sync.Mutex
		killed int
		done   bool
	}
	childStart := ramp
	if p.Children > 0 {
		sizes := make([]float64, p.Children)
		for i := range sizes {
			sizes[i] = jitter(p.ChildMB)
		}
		go func() {
			time.Sleep(childStart)
			killed := runChildren(sizes, p.ChildLenMS, stdout)
			if killed > 0 && p.OnChildKilled == "retry" {
				fmt.Fprintf(stdout, "%d job(s) were killed; retrying one at a time\n", killed)
				for i := range sizes {
					sizes[i] /= 2
				}
				killed = 0
				for _, s := range sizes[:min(len(sizes), 2)] {
					killed += runChildren([]float64{s}, p.ChildLenMS, stdout)
				}
			}
			childResult.Lock()
			childResult.killed, childResult.done = killed, true
			childResult.Unlock()
		}()
	} else {
		childResult.done = true
	}

	var held, spike, pinned memory
	if p.HoldAtLimit {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			if p.HoldAfterMS > 0 {
				select {
				case <-time.After(time.Duration(p.HoldAfterMS) * time.Millisecond):
				case <-stop:
					return
				}
			}
			if p.ThrashMB > 0 {
				thrashAtLimit(&pinned, p.ThrashMB, stop, stderr)
				return
			}
			holdAtLimit(&pinned, stop, stderr)
		}()
	}
	start := time.Now()
	lines := out.lines
	var spikeEnd, nextSpike, spikeHeld time.Time
	if p.SpikeEvery > 0 {
		nextSpike = start.Add(time.Duration(p.SpikeEvery) * time.Millisecond)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for now := start; ; now = <-tick.C {
		el := now.Sub(start)
		// Ramp the base.
		want := base
		if ramp > 0 && el < ramp {
			want = base * float64(el) / float64(ramp)
		}
		if d := want - held.mib(); d >= 1 {
			held.grow(d)
		}
		// Spikes.
		if !spikeEnd.IsZero() && now.After(spikeEnd) {
			if p.SpikeLog {
				fmt.Fprintf(stdout, "spike %d %d\n", spikeHeld.UnixNano(), time.Now().UnixNano())
			}
			spike.release()
			spikeEnd = time.Time{}
		}
		if p.SpikeEvery > 0 && spikeEnd.IsZero() && now.After(nextSpike) && el < duration {
			nextSpike = now.Add(time.Duration(p.SpikeEvery) * time.Millisecond)
			if rng.Float64() < p.SpikeChance {
				spike.grow(jitter(p.SpikeMB))
				spikeHeld = time.Now()
				spikeEnd = now.Add(time.Duration(max(p.SpikeLenMS, 10)) * time.Millisecond)
			}
		}
		// Output, spread over the duration.
		for len(lines) > 0 && (duration == 0 || el >= time.Duration(float64(duration)*lines[0].at)) {
			fmt.Fprintln(stdout, lines[0].text)
			lines = lines[1:]
		}
		childResult.Lock()
		done := childResult.done
		childResult.Unlock()
		if el >= duration && done && spikeEnd.IsZero() && len(lines) == 0 {
			break
		}
	}
	if childResult.killed > 0 {
		switch p.OnChildKilled {
		case "continue":
			// The kill goes unnoticed, as with a shell that ignores a
			// child's status: the step "succeeds" but its product is
			// broken, so no marker is written.
			for _, l := range out.success() {
				fmt.Fprintln(stdout, l)
			}
			return 0
		default:
			fmt.Fprintf(stderr, "error: %d subprocess(es) were killed (signal 9)\n", childResult.killed)
			return 1
		}
	}
	if willFail {
		for _, l := range out.failure() {
			fmt.Fprintln(stderr, l)
		}
		return 1
	}
	for _, l := range out.success() {
		fmt.Fprintln(stdout, l)
	}
	for _, w := range p.Writes {
		if err := os.MkdirAll(markerDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "hr-workload: %v\n", err)
			return 1
		}
		if err := os.WriteFile(filepath.Join(markerDir, w), []byte("ok\n"), 0o644); err != nil {
			fmt.Fprintf(stderr, "hr-workload: %v\n", err)
			return 1
		}
	}
	return 0
}

// runChildren runs one child process per size in parallel and returns how
// many were killed by a signal.
func runChildren(sizes []float64, lenMS int, stdout io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		self = wire.Binary
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	killed := 0
	for _, s := range sizes {
		cmd := exec.Command(self, "child", "--mb", strconv.FormatFloat(s, 'f', 1, 64), "--ms", strconv.Itoa(lenMS))
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(stdout, "cannot start job: %v\n", err)
			mu.Lock()
			killed++
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					mu.Lock()
					killed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return killed
}

func child(args []string) int {
	fs := flag.NewFlagSet("child", flag.ContinueOnError)
	mb := fs.Float64("mb", 0, "MiB to allocate")
	ms := fs.Int("ms", 0, "how long to hold it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var m memory
	deadline := time.Now().Add(time.Duration(*ms) * time.Millisecond)
	// Grow over the first third, as a compiler's heap does.
	steps := 10
	for i := 0; i < steps; i++ {
		m.grow(*mb / float64(steps))
		time.Sleep(time.Duration(*ms) * time.Millisecond / 3 / time.Duration(steps))
	}
	time.Sleep(time.Until(deadline))
	return 0
}

// burn keeps a fraction of one core busy.
func burn(frac float64) {
	const period = 10 * time.Millisecond
	busy := time.Duration(float64(period) * frac)
	x := 1.0
	for {
		t := time.Now()
		for time.Since(t) < busy {
			x = x*1.0000001 + 1
		}
		if x == 0 {
			fmt.Print("")
		}
		time.Sleep(period - busy)
	}
}
