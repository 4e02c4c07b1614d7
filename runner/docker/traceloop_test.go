package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// traceLoop is the loop #40.14 saw become 80,002 steps and a 25.6 MB
// record: 0.59 s of bash, two traced commands an iteration.
func traceLoop(iterations int) string {
	return fmt.Sprintf(`for i in $(seq 1 %d); do :; done`, iterations)
}

// tracedLoopTask runs traceLoop traced in the Debian image, through the
// engine's exec (a task image's steps).
func tracedLoopTask(t testing.TB, iterations int) model.Task {
	task := parseTask(t, `
[task]
name = "bench/traced-loop"
[environment]
image = "`+DebianImage+`"
memory = "256M"
[verifier]
command = ["true"]
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "loop"
  command = ["true"]
`)
	task.Image = DebianImage
	task.Agents[0].Steps = []model.Step{{Name: "agent", Argv: []string{"-c", traceLoop(iterations)}, Trace: true}}
	return task
}

// A traced loop of 40,000 iterations passes with its first and last
// commands kept as steps and the rest folded into one: a record line of
// kilobytes, not 25 MB (#40.14).
func TestTracedLoopIsBounded(t *testing.T) {
	needDebian(t)
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{tracedLoopTask(t, 40000)}, []model.Ratio{model.Uncapped}, 1, context.Background(), nil)
	r := results[0]
	if r.Outcome != model.Passed {
		t.Fatalf("outcome %s (%s)", r.Outcome, r.Reason)
	}
	commands, folded := 0, 0
	for _, s := range r.Steps {
		if s.Phase == "agent" && !strings.HasPrefix(s.ExitUnknown, "not a command") {
			commands++ // not the fold, nor `++ seq`'s trace before the first command
		}
		for _, c := range s.Folded {
			folded += c.Count
		}
	}
	if max := runner.TracedHeadSteps + runner.TracedTailSteps; commands != max {
		t.Errorf("%d commands kept as steps, want %d", commands, max)
	}
	// `seq` and 40,000 × (`for`'s test, `:`): each command a step or counted.
	if want := 80001 - runner.TracedHeadSteps - runner.TracedTailSteps; folded < want-2 || folded > want+2 {
		t.Errorf("%d commands folded, want about %d", folded, want)
	}
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(line) > 100<<10 {
		t.Errorf("record line of %d bytes, want under 100 KB", len(line))
	}
}

// Tracing's cost beside the loop itself, side by side in one run:
//
//	go test -run '^$' -bench TracedLoop -benchtime 3x ./runner/docker
//
// each at the 4,000 iterations (8,002 commands, #40.14's figure:
// the target is within 1.2× of the docker run) and at 40,000 (80,002,
// the attacker's loop, where bash's own PS4 expansion dominates):
//
// HeadroomTracedLoop is a whole trial of the loop traced, with headroom's own CPU a command (this process's
// user + system time over the trials), its record's bytes a command and
// the traced step's own time (its first command's start to its last's
// end);
// DockerRunTracedLoop is `docker run --rm headroom-debian:bookworm bash -x
// -c '<loop>'`, its trace read and thrown away.
func BenchmarkHeadroomTracedLoop(b *testing.B) {
	for _, n := range loopSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { headroomTracedLoop(b, n) })
	}
}

// loopSizes are the traced loop's iterations the benchmarks run.
var loopSizes = []int{4000, 40000}

func headroomTracedLoop(b *testing.B, iterations int) {
	needDebian(b)
	task := tracedLoopTask(b, iterations)
	be := newBackend(b, Options{})
	before := cpuTime()
	b.ResetTimer()
	records := 0
	var step time.Duration
	for i := 0; i < b.N; i++ {
		results, _ := sweep(b, be, []model.Task{task}, []model.Ratio{model.Uncapped}, 1, context.Background(), nil)
		r := results[0]
		if r.Outcome != model.Passed {
			b.Fatalf("%s: %s", r.Outcome, r.Reason)
		}
		line, _ := json.Marshal(r)
		records += len(line)
		var first, last time.Time
		for _, s := range r.Steps {
			if s.Phase == "agent" {
				if first.IsZero() {
					first = s.Start
				}
				last = s.End
			}
		}
		step += last.Sub(first)
	}
	b.StopTimer()
	commands := float64(b.N * (2*iterations + 2))
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/commands, "cpu-µs/cmd")
	b.ReportMetric(float64(records)/commands, "record-B/cmd")
	b.ReportMetric(step.Seconds()/float64(b.N), "step-s/op")
}

func BenchmarkDockerRunTracedLoop(b *testing.B) {
	for _, n := range loopSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { dockerRunLoop(b, "bash", "-x", "-c", traceLoop(n)) })
	}
}

// DockerRunTracedLoopPS4 is the same `docker run` with headroom's PS4
// (each command's status, process and depth, which bash expands before
// every command): what bash itself costs more under headroom's trace.
func BenchmarkDockerRunTracedLoopPS4(b *testing.B) {
	// runner/trace.go's PS4 (traceSetupHead, a nonce, traceSetupTail).
	ps4 := "$'\\x1e" + runner.TraceMarker + strings.Repeat("0", 16) + " '" + `'$?|${PIPESTATUS[*]}|$BASHPID|'$$'|${FUNCNAME+${#FUNCNAME[@]}}|${!:-0}] '`
	for _, n := range loopSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { dockerRunLoop(b, "bash", "-c", "PS4="+ps4+"; set -x; "+traceLoop(n)) })
	}
}

// dockerRunLoop runs `docker run --rm` of the Debian image with argv, its
// output read and thrown away, b.N times.
func dockerRunLoop(b *testing.B, argv ...string) {
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("no docker CLI")
	}
	needDebian(b)
	args := append([]string{"run", "--rm", "--network", "none", "--label", runner.LabelExperiment + "=" + testExperimentPrefix, DebianImage}, argv...)
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out[max(len(out)-2000, 0):])
		}
	}
}

// cpuTime is this process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
