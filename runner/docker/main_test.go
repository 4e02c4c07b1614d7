package docker

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
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
	testImage, testBinary, err = enginetest.WorkloadImage(context.Background(), &Platform{cli: cli}, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
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
	return enginetest.Task(t, testImage, toml)
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
	return enginetest.Run(t, ctx, b, enginetest.Sweep{Experiment: testExperimentPrefix, Tasks: tasks, Ratios: ratios, Repeats: repeats, Tune: tune, OnEvent: onEvent})
}
