package docker

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// The step driver replaces the harness's idle `sh -c "sleep infinity"` as
// the container's first process, and holds more memory than it: the limit
// of a driven container is the ratio's plus model.DriverMemoryBytes, so
// that the task's processes have the whole limit, as under the harness.
// Measured here: the anonymous memory of a container running one waiting
// step, through the driver and by exec beside the idle command; the
// allowance must cover the difference and not exceed it by more than
// 512 KiB. Before it, a step that fit its 64 MiB limit within 1.5 MiB by
// exec was OOM-killed through the driver, 3 of 3.
func TestDriverMemoryIsItsAllowance(t *testing.T) {
	needDebian(t)
	task := model.Task{Name: "test/driver-memory", Image: DebianImage, Network: "none", IdleCommand: []string{"sh", "-c", "sleep infinity"},
		Resources: model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}}
	task.SetProfile(model.ProfileHarbor)
	anon := map[string]int64{}
	for _, runner_ := range []string{runner.StepsByDriver, runner.StepsByExec} {
		b := newBackend(t, Options{DriverBinary: testBinary, ExecSteps: runner_ == runner.StepsByExec})
		tr := model.Trial{ID: "driver-memory-" + runner_, Task: task.Name, Ratio: model.Ratio{K: 1}, Policy: model.NewPolicy(task.Resources, model.Ratio{K: 1}, 2)}
		ctx := context.Background()
		sb, err := b.Start(ctx, runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
		if err != nil {
			t.Fatal(err)
		}
		removed := false
		remove := func() {
			if !removed {
				removed = true
				sb.Remove(context.Background())
			}
		}
		t.Cleanup(remove)
		go func() {
			for range sb.Samples() {
			}
		}()
		if got := sb.StepRunner(); got != runner_ {
			t.Fatalf("step runner %q, want %q", got, runner_)
		}
		stepDone, waiting := make(chan struct{}), make(chan struct{})
		var once sync.Once
		go func() {
			defer close(stepDone)
			sb.Exec(ctx, []string{"sh", "-c", "echo waiting; exec sleep 600"}, nil, "", func(string, string) { once.Do(func() { close(waiting) }) })
		}()
		select {
		case <-waiting:
		case <-time.After(time.Minute):
			t.Fatalf("%s: the step said nothing within a minute", runner_)
		}
		cg := sb.(*sandbox).cg
		if cg == nil {
			t.Skip("the container's cgroup files are not readable here")
		}
		limit, _ := cg.MemoryLimit()
		want := tr.Policy.HardLimitBytes
		if runner_ == runner.StepsByDriver {
			want += model.DriverMemoryBytes
		}
		if limit != want {
			t.Errorf("%s: the kernel's limit is %d, want %d", runner_, limit, want)
		}
		// The largest of ten readings a tenth of a second apart: the
		// driver's runtime settles after the step starts.
		for range 10 {
			if n := anonOf(t, cg); n > anon[runner_] {
				anon[runner_] = n
			}
			time.Sleep(100 * time.Millisecond)
		}
		remove()
		<-stepDone
	}
	diff := anon[runner.StepsByDriver] - anon[runner.StepsByExec]
	t.Logf("anonymous memory with a step waiting: %d bytes through the driver, %d by exec beside the idle command: %d more; allowance %d",
		anon[runner.StepsByDriver], anon[runner.StepsByExec], diff, model.DriverMemoryBytes)
	if diff > model.DriverMemoryBytes || model.DriverMemoryBytes > diff+512<<10 {
		t.Errorf("the driver holds %d bytes more than the idle command; model.DriverMemoryBytes is %d: set it to the difference, rounded up", diff, model.DriverMemoryBytes)
	}
}

// anonOf reads a container's anonymous memory (v2 memory.stat anon, v1
// rss).
func anonOf(t *testing.T, cg *cgroup.Reader) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cg.Dir(), "memory.stat"))
	if err != nil {
		t.Fatal(err)
	}
	key := "rss"
	if cg.Version() == 2 {
		key = "anon"
	}
	n, ok := cgroup.FlatKeyed(b, key)
	if !ok {
		t.Fatalf("%s has no %s", filepath.Join(cg.Dir(), "memory.stat"), key)
	}
	return n
}
