package docker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// The tests in this package run real containers on the real engine.
var (
	testCli   *client.Client
	testImage string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	cli, err := Connect()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = cli.Ping(ctx)
		cancel()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "docker engine required in CI: %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "skipping docker tests: no engine (%v)\n", err)
		return 0
	}
	testCli = cli
	dir, err := os.MkdirTemp("", "headroom-test")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "hr-workload")
	build := exec.Command("go", "build", "-o", bin, "github.com/headroom-eval/headroom/cmd/hr-workload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build workload: %v\n%s", err, out)
		return 1
	}
	testBinary = bin
	testImage, err = EnsureWorkloadImage(context.Background(), cli, bin, false, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "workload image: %v\n", err)
		return 1
	}
	code := m.Run()
	// Nothing may be left behind by any test.
	left, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+testExperimentPrefix))})
	if err == nil && len(left) > 0 {
		fmt.Fprintf(os.Stderr, "%d container(s) left behind\n", len(left))
		return 1
	}
	return code
}

// testExperimentPrefix labels this test process's containers (and names
// them): two test runs on one engine must not collide.
var testExperimentPrefix = fmt.Sprintf("test%d", os.Getpid())

// parseTask reads an inline task file and points it at the test image.
func parseTask(t testing.TB, toml string) model.Task {
	t.Helper()
	l, err := taskfile.Parse(t.Name()+".toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	tasks := []model.Task{l.Task}
	taskfile.ResolveImages(tasks, testImage)
	return tasks[0]
}

func newBackend(t testing.TB, opts Options) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if opts.HelperImage == "" {
		opts.HelperImage = testImage
	}
	b, err := New(ctx, testCli, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// sweep runs a plan to the end and returns the results and every event.
func sweep(t testing.TB, b runner.Backend, tasks []model.Task, ratios []model.Ratio, repeats int, ctx context.Context, onEvent func(event.Event)) ([]model.TrialResult, []event.Event) {
	t.Helper()
	return sweepAtOnce(t, b, tasks, ratios, repeats, 2, ctx, onEvent)
}

// sweepAtOnce is sweep with concurrency trials at once.
func sweepAtOnce(t testing.TB, b runner.Backend, tasks []model.Task, ratios []model.Ratio, repeats, concurrency int, ctx context.Context, onEvent func(event.Event)) ([]model.TrialResult, []event.Event) {
	t.Helper()
	return sweepTuned(t, b, tasks, ratios, repeats, ctx, onEvent, func(c *runner.Config) { c.Concurrency = concurrency })
}

// sweepTuned is sweep with the runner's configuration changed by tune.
func sweepTuned(t testing.TB, b runner.Backend, tasks []model.Task, ratios []model.Ratio, repeats int, ctx context.Context, onEvent func(event.Event), tune func(*runner.Config)) ([]model.TrialResult, []event.Event) {
	t.Helper()
	plan, err := model.NewPlan(model.PlanSpec{Tasks: tasks, Ratios: ratios, Repeats: repeats, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{Experiment: testExperimentPrefix, Plan: plan, Tasks: tasks, Concurrency: 2, GuaranteeCapacityBytes: 8 << 30,
		// A local engine: the host's pressure is read for each trial's noise.
		Host: func() runner.HostLoad { return runner.HostLoad{} }, HostCPUs: 2}
	if tune != nil {
		tune(&cfg)
	}
	r, err := runner.New(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 256)
	go r.Run(ctx, out)
	var results []model.TrialResult
	var evs []event.Event
	deadline := time.After(8 * time.Minute)
	for {
		select {
		case e, ok := <-out:
			if !ok {
				return results, evs
			}
			evs = append(evs, e)
			if onEvent != nil {
				onEvent(e)
			}
			if te, ok := e.(event.TrialEnded); ok {
				results = append(results, te.Result)
			}
		case <-deadline:
			t.Fatal("sweep did not finish within 8 minutes")
		}
	}
}
