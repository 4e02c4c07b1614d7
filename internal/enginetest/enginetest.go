// Package enginetest is what the backends' real-engine tests share (the
// Docker engine's in runner/docker, the cluster's in runner/kube): the
// workload image built from this tree, the sweep that runs a plan to its
// end, the tasks both run, and a connection a test can cut. It imports
// no backend: each suite hands it its own.
package enginetest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// WorkloadImage builds the in-container program (cmd/hr-workload) of this
// tree, static, into dir and has b make headroom's image of it; it
// returns the image's reference and the program's path.
func WorkloadImage(ctx context.Context, b runner.ImageBuilder, dir string) (image, bin string, err error) {
	bin = filepath.Join(dir, runner.WorkloadProgram)
	build := exec.Command("go", "build", "-o", bin, "github.com/headroom-eval/headroom/cmd/hr-workload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("build workload: %v\n%s", err, out)
	}
	image, err = b.WorkloadImage(ctx, bin, false, nil)
	if err != nil {
		return "", "", fmt.Errorf("workload image: %w", err)
	}
	return image, bin, nil
}

// Task reads an inline task file (named after the test) and points its
// built-in image at image.
func Task(t testing.TB, image, toml string) model.Task {
	t.Helper()
	l, err := taskfile.Parse(t.Name()+".toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	tasks := []model.Task{l.Task}
	taskfile.ResolveImages(tasks, image)
	return tasks[0]
}

// HeavyInstall is a task whose install step allocates 110 MiB under a
// 64 MiB limit: at 1x the kernel kills in that step; uncapped it passes.
const HeavyInstall = `
[task]
name = "test/heavy"
[environment]
image = "builtin"
memory = "64M"
cpus = 1
[agent]
timeout_sec = 60
[verifier]
timeout_sec = 30
show = "pytest"
workload = { style = "pytest", duration_ms = 200, base_mb = 5, requires = ["deps"] }
[[agents]]
name = "heavy"
  [[agents.steps]]
  name = "prepare"
  show = "echo hi"
  workload = { style = "edit", duration_ms = 100, base_mb = 2 }
  [[agents.steps]]
  name = "install"
  show = "pip install pandas"
  workload = { style = "pip", packages = ["pandas"], duration_ms = 1000, base_mb = 110, writes = ["deps"] }
`

// ChildKill is a task whose build step forks three children of 45 MiB
// under a 96 MiB limit: at 1x the kernel kills a child while the step
// lives, the step retries it and the verifier passes (passed-after-oom).
const ChildKill = `
[task]
name = "test/retry"
[environment]
image = "builtin"
memory = "96M"
[verifier]
workload = { duration_ms = 100, base_mb = 2, requires = ["target"] }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "build"
  show = "cargo build -j3"
  workload = { style = "build", duration_ms = 300, base_mb = 4, children = 3, child_mb = 45, child_len_ms = 900, on_child_killed = "retry", writes = ["target"] }
`

// KilledThenVerify is a task whose install step allocates 200 MiB under a
// 128 MiB limit and is OOM-killed at it, then a verifier of a few MiB:
// the verifier's need is its own, not the killed step's (issue #39).
const KilledThenVerify = `
[task]
name = "test/killed-then-verify"
[environment]
image = "builtin"
memory = "128M"
cpus = 1
[agent]
timeout_sec = 60
[verifier]
timeout_sec = 30
show = "pytest"
workload = { style = "pytest", duration_ms = 600, base_mb = 4 }
[[agents]]
name = "greedy"
  [[agents.steps]]
  name = "install"
  show = "pip install pandas"
  workload = { style = "pip", packages = ["pandas"], duration_ms = 1500, base_mb = 200 }
`

// VerifierNeedMiB bounds KilledThenVerify's verifier's need: its 4 MiB,
// the probe's or driver's own and the runtime's, far under the 127 MiB
// the killed step reached.
const VerifierNeedMiB = 24

// CheckVerifierNeed checks a KilledThenVerify trial: its install
// OOM-killed, its verifier's need under VerifierNeedMiB.
func CheckVerifierNeed(t testing.TB, r model.TrialResult) {
	t.Helper()
	var install, verify *model.StepResult
	for i := range r.Steps {
		switch s := &r.Steps[i]; {
		case s.Name == "install":
			install = s
		case s.Phase == model.PhaseVerifier:
			verify = s
		}
	}
	if install == nil || verify == nil || install.OOMKills == 0 {
		t.Fatalf("trial %s (%s: %s): want install OOM-killed and a verifier, got %+v", r.ID, r.Outcome, r.Reason, r.Steps)
	}
	t.Logf("%s: install kernel peak %s; verifier sampled %s, kernel peak %s, without cache %s, need %s", r.ID,
		model.FormatBytes(install.KernelPeakBytes), model.FormatBytes(verify.PeakWorkingSetBytes), model.FormatBytes(verify.KernelPeakBytes),
		model.FormatBytes(verify.KernelPeakNoCacheBytes), model.FormatBytes(model.StepPeakBytes(*verify)))
	if need := model.StepPeakBytes(*verify); need > VerifierNeedMiB*model.MiB {
		t.Errorf("%s: verifier need %s (kernel peak %s): the killed step's %s carried over", r.ID, model.FormatBytes(need),
			model.FormatBytes(verify.KernelPeakBytes), model.FormatBytes(install.KernelPeakBytes))
	}
}

// GradedAfterTimeout is a task whose agent writes its answer and then
// works on past its 3 s time limit: graded as Harbor and terminal-bench
// grade it, the verifier judges the answer and the trial passes, after a
// timeout (passed-after-timeout).
const GradedAfterTimeout = `
[task]
name = "test/graded-after-timeout"
[environment]
image = "builtin"
memory = "64M"
[agent]
timeout_sec = 3
[verifier]
timeout_sec = 30
workload = { duration_ms = 50, base_mb = 2, requires = ["answer"] }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "answer"
  show = "python3 solve.py > answer"
  workload = { duration_ms = 50, base_mb = 2, writes = ["answer"] }
  [[agents.steps]]
  name = "polish"
  show = "python3 polish.py"
  workload = { duration_ms = 600000, base_mb = 2 }
`

// Sweep is a plan for Run and how it runs.
type Sweep struct {
	Experiment string
	Tasks      []model.Task
	Ratios     []model.Ratio
	Repeats    int // 1 when 0
	// Concurrency is how many trials run at once (2 when 0).
	Concurrency int
	// Tune changes the runner's configuration before the sweep.
	Tune func(*runner.Config)
	// OnEvent sees each event as it comes.
	OnEvent func(event.Event)
	// Within bounds the sweep (8 minutes when 0): past it the test fails.
	Within time.Duration
}

// Run runs the sweep on b to its end and returns the trials' results
// and every event.
func Run(t testing.TB, ctx context.Context, b runner.Backend, s Sweep) ([]model.TrialResult, []event.Event) {
	t.Helper()
	if s.Repeats == 0 {
		s.Repeats = 1
	}
	if s.Concurrency == 0 {
		s.Concurrency = 2
	}
	if s.Within == 0 {
		s.Within = 8 * time.Minute
	}
	// Every agent of every task, check agents (nop) too: a suite's
	// sweep runs what its tasks have, as it did before nop ran only when
	// named.
	plan, err := model.NewPlan(model.PlanSpec{Tasks: s.Tasks, Agents: model.AllAgentNames(s.Tasks), Ratios: s.Ratios, Repeats: s.Repeats, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{Experiment: s.Experiment, Plan: plan, Tasks: s.Tasks, Concurrency: s.Concurrency, GuaranteeCapacityBytes: 8 << 30,
		// The host's pressure is read for each trial's noise.
		Host: func() runner.HostLoad { return runner.HostLoad{} }, HostCPUs: 2}
	if s.Tune != nil {
		s.Tune(&cfg)
	}
	r, err := runner.New(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 256)
	go r.Run(ctx, out)
	var results []model.TrialResult
	var evs []event.Event
	deadline := time.After(s.Within)
	for {
		select {
		case e, ok := <-out:
			if !ok {
				return results, evs
			}
			evs = append(evs, e)
			if s.OnEvent != nil {
				s.OnEvent(e)
			}
			if te, ok := e.(event.TrialEnded); ok {
				results = append(results, te.Result)
			}
		case <-deadline:
			t.Fatalf("sweep did not finish within %s", s.Within)
		}
	}
}

// Cutter relays connections to an engine or API server until Cut: the
// engine going away as headroom sees it (refused, open streams broken),
// without stopping the one every test shares.
type Cutter struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// NewCutter listens on network ("unix": a socket in a test directory;
// "tcp": a port of 127.0.0.1) and relays each connection to target; it
// is cut at the end of the test at the latest.
func NewCutter(t testing.TB, network, target string) *Cutter {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "engine.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cutter{ln: ln}
	t.Cleanup(c.Cut)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial(network, target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

// Addr is where the relay listens (a socket's path, a host:port).
func (c *Cutter) Addr() string { return c.ln.Addr().String() }

// Cut makes the target unreachable through the relay: it listens no more
// and every open connection is closed.
func (c *Cutter) Cut() {
	c.ln.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.conns {
		k.Close()
	}
	c.conns = nil
}
