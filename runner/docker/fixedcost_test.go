package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// trivialHarbor is perf/harbor/trivial (a Harbor task on the Debian image:
// the oracle's solution and the verifier's tests are copied in, the reward
// file read back), its oracle alone.
func trivialHarbor(t *testing.T) model.Task {
	t.Helper()
	needDebian(t)
	l, err := taskfile.LoadTaskDir("../../perf/harbor/trivial")
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	a, ok := task.Agent(taskfile.AgentOracle)
	if !ok {
		t.Fatal("no oracle")
	}
	task.Agents = []model.Agent{a}
	return task
}

// copies counts the engine's archive events (a copy into or out of a
// container) for this test process's containers while run runs. The
// engine delivers a container's events in order, ending with its destroy:
// once the stream has brought the destroy of every trial container run
// started (its events' TrialStarted), every copy is counted.
func copies(t *testing.T, run func() []event.Event) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	msgs, errs := testCli.Events(ctx, events.ListOptions{Since: time.Now().Add(-time.Second).Format(time.RFC3339Nano),
		Filters: filters.NewArgs(filters.Arg("type", "container"), filters.Arg("label", runner.LabelExperiment+"="+testExperimentPrefix))})
	var mu sync.Mutex
	n := map[string]int{} // by container: the stream starts a second back, where an earlier test's copies may be
	gone := map[string]bool{}
	destroyed := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case m := <-msgs:
				mu.Lock()
				switch m.Action {
				case events.ActionExtractToDir, events.ActionArchivePath:
					n[m.Actor.ID]++
				case events.ActionDestroy:
					gone[m.Actor.ID] = true
					select {
					case destroyed <- struct{}{}:
					default:
					}
				}
				mu.Unlock()
			case <-errs:
				return
			}
		}
	}()
	var started []string
	for _, e := range run() {
		if s, ok := e.(event.TrialStarted); ok {
			started = append(started, s.ContainerID)
		}
	}
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		waiting := slices.ContainsFunc(started, func(id string) bool { return !gone[id] })
		mu.Unlock()
		if !waiting {
			break
		}
		select {
		case <-destroyed:
		case <-deadline:
			t.Fatalf("the engine's events never brought the destroy of every trial container (%d started)", len(started))
		}
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, id := range started {
		total += n[id]
	}
	return total
}

// With the step driver mounted, a task directory's files go in and its
// reward comes out through the driver, not the engine's copy (which cost
// 0.2-0.65 s each on this host against a few ms): none of the engine's
// archive events. With every step an exec the engine copies, as before.
func TestTaskFilesGoThroughTheDriver(t *testing.T) {
	needEngine(t)
	task := trivialHarbor(t)
	for _, c := range []struct {
		name   string
		opts   Options
		copies bool
	}{
		{"driver", Options{DriverBinary: testBinary}, false},
		{"exec", Options{DriverBinary: testBinary, ExecSteps: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBackend(t, c.opts)
			var results []model.TrialResult
			n := copies(t, func() []event.Event {
				var evs []event.Event
				results, evs = sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
				return evs
			})
			if len(results) != 1 || results[0].Outcome != model.Passed || results[0].Reward == nil || *results[0].Reward != 1 {
				t.Fatalf("trial: %+v", results)
			}
			if c.copies && n == 0 {
				t.Errorf("no archive events with exec steps: the count sees nothing")
			}
			if !c.copies && n != 0 {
				t.Errorf("%d archive events with the driver mounted, want none", n)
			}
		})
	}
}

// An engine that refuses Harbor's open-files limit is remembered per
// engine: a later command's backend starts its first Harbor container with
// the engine's own limit, without the refused create, start and remove
// every command paid before its first trial (0.5-2 s here).
func TestOpenFilesRefusalIsRemembered(t *testing.T) {
	needEngine(t)
	task := trivialHarbor(t)
	memo := filepath.Join(t.TempDir(), "nofile-refused")
	results, _ := sweep(t, newBackend(t, Options{DriverBinary: testBinary, NoFileMemo: memo}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	if len(results) != 1 || results[0].Outcome != model.Passed {
		t.Fatalf("trial: %+v", results)
	}
	if _, err := os.Stat(memo); err != nil {
		t.Skipf("this engine gives containers Harbor's open-files limit: nothing to remember (%v)", err)
	}
	if b := newBackend(t, Options{NoFileMemo: memo}); !b.noFileLow.Load() {
		t.Error("a new backend on the same engine does not know the refusal")
	}
	if b := newBackend(t, Options{NoFileMemo: filepath.Join(t.TempDir(), "other")}); b.noFileLow.Load() {
		t.Error("a backend without the memo starts as if refused")
	}
}

// The next trial starts while the last one's container is removed: a
// trial's slot is free once its container is dead (runner.Stopper), not
// after the engine's remove and the destroy event (~90 ms a trial on this
// host, on the critical path before). Each trial's removal here waits
// until the next trial's container has started, which never happens with
// the teardown on the critical path; the container the next one starts
// beside is dead, each trial ends once, and nothing is left (TestMain).
func TestNextTrialStartsBesideTheRemoval(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{DriverBinary: testBinary})
	task := parseTask(t, `
[task]
name = "test/beside-removal"
[environment]
image = "builtin"
memory = "32M"
[verifier]
workload = { duration_ms = 0 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "step"
  workload = { duration_ms = 0 }
`)
	const trials = 3
	var mu sync.Mutex
	var order []string // containers in the order they started
	changed := make(chan struct{})
	var problems []string
	b.beforeRemove = func(id string) {
		if info, err := testCli.ContainerInspect(context.Background(), id); err == nil && info.State != nil &&
			(info.State.StartedAt == "" || strings.HasPrefix(info.State.StartedAt, "0001-")) {
			return // a start the engine refused (the spared driver's, on an engine that refuses it): no trial's
		}
		deadline := time.After(10 * time.Second)
		for {
			mu.Lock()
			i := slices.Index(order, id)
			next, last, ch := i >= 0 && i+1 < len(order), i == trials-1, changed
			mu.Unlock()
			if next || last {
				break
			}
			select {
			case <-ch:
				continue
			case <-deadline:
				mu.Lock()
				problems = append(problems, fmt.Sprintf("container %d of %d: its removal began before the next trial's container started", i+1, trials))
				mu.Unlock()
				return
			}
		}
		info, err := testCli.ContainerInspect(context.Background(), id)
		if err != nil || info.State == nil || info.State.Running {
			mu.Lock()
			problems = append(problems, fmt.Sprintf("container %s at its removal: %v, running %v; want dead", id[:12], err, info.State != nil && info.State.Running))
			mu.Unlock()
		}
	}
	ended := map[string]int{}
	results, evs := sweepAtOnce(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, trials, 1, context.Background(), func(e event.Event) {
		switch e := e.(type) {
		case event.TrialStarted:
			mu.Lock()
			order = append(order, e.ContainerID)
			close(changed)
			changed = make(chan struct{})
			mu.Unlock()
		case event.TrialEnded:
			ended[e.Trial]++
		}
	})
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	if len(results) != trials {
		t.Fatalf("%d results, want %d", len(results), trials)
	}
	for _, r := range results {
		if r.Outcome != model.Passed || ended[r.ID] != 1 {
			t.Errorf("%s: %s (%s), ended %d time(s)", r.ID, r.Outcome, r.Reason, ended[r.ID])
		}
	}
	if _, ok := evs[len(evs)-1].(event.SweepEnded); !ok {
		t.Errorf("last event %T, want SweepEnded after every trial's end", evs[len(evs)-1])
	}
}

// Stop returns once every process of the container is gone (their memory
// freed: what admission lets the next trial have), before the engine has
// finished handling the exit; Remove then waits for the engine and
// removes it, and a kill of its own is not someone else's.
func TestStopReturnsOnceTheContainerIsDead(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{DriverBinary: testBinary})
	task := parseTask(t, enginetest.HeavyInstall)
	tr := model.Trial{ID: "stop", Task: task.Name, Ratio: model.Ratio{K: 1}, Policy: model.NewPolicy(task.Resources, model.Ratio{K: 1}, 2)}
	sb, err := b.Start(context.Background(), runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	s := sb.(*sandbox)
	if s.cg == nil {
		sb.Remove(context.Background())
		t.Skip("the container's cgroup is not readable here")
	}
	procs := filepath.Join(s.cg.Dir(), "cgroup.procs")
	if b, err := os.ReadFile(procs); err != nil || len(strings.Fields(string(b))) == 0 {
		sb.Remove(context.Background())
		t.Fatalf("before Stop the cgroup lists %q (%v): nothing to see die", b, err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadFile(procs)
	f, rmErr := sb.Remove(context.Background())
	if err == nil && len(strings.Fields(string(left))) > 0 {
		t.Errorf("Stop returned with processes %q still in the cgroup", left)
	}
	if rmErr != nil || f.KilledBy != "" {
		t.Errorf("remove: %v, killed by %q: want removed, no one else's kill", rmErr, f.KilledBy)
	}
	if _, err := testCli.ContainerInspect(context.Background(), sb.ID()); err == nil {
		t.Error("the container is still there after Remove")
	}
}
