package docker

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
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
// container) for this test process's containers while run runs.
func copies(t *testing.T, run func()) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	msgs, errs := testCli.Events(ctx, events.ListOptions{Since: time.Now().Add(-time.Second).Format(time.RFC3339Nano),
		Filters: filters.NewArgs(filters.Arg("type", "container"), filters.Arg("label", runner.LabelExperiment+"="+testExperimentPrefix))})
	var mu sync.Mutex
	n := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case m := <-msgs:
				if m.Action == "extract-to-dir" || m.Action == "archive-path" {
					mu.Lock()
					n++
					mu.Unlock()
				}
			case <-errs:
				return
			}
		}
	}()
	run()
	// The events of the trial's container end with its destroy, which
	// sweep waited for; a moment more for the stream to deliver them.
	time.Sleep(500 * time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return n
}

// With the step driver mounted, a task directory's files go in and its
// reward comes out through the driver, not the engine's copy (which cost
// 0.2-0.65 s each on this host against a few ms): none of the engine's
// archive events. With every step an exec the engine copies, as before.
func TestTaskFilesGoThroughTheDriver(t *testing.T) {
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
			n := copies(t, func() {
				results, _ = sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
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
