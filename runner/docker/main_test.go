package docker

import (
	"context"
	"fmt"
	"os"
	"sync"
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

// Most tests in this package run real containers on the real engine; the
// rest (parsers, the driver's protocol, flags, uploads) need none. An
// engine test starts with needEngine, which connects and builds the
// workload image once, on the first test that asks: without an engine
// (or with -short) the engine tests skip saying why and the others run.
var (
	testCli   *client.Client
	testImage string

	engineOnce sync.Once
	engineErr  error // no engine answered
	setupErr   error // it answered, and the workload image could not be made
	setupDir   string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// The task images these tests' own tasks build (test/…, and the task
	// directories of testdata/tb by their names) are removed once they
	// have run, as the cli tests remove theirs; one that was there before
	// is left.
	mine := []string{"test-"}
	if dirs, err := os.ReadDir("testdata/tb"); err == nil {
		for _, d := range dirs {
			mine = append(mine, d.Name()+":")
		}
	}
	imagesBefore := enginetest.TaskImages(TaskRepo, mine...)
	defer func() { enginetest.RemoveNewImages(imagesBefore, enginetest.TaskImages(TaskRepo, mine...)) }()
	code := m.Run()
	if setupDir != "" {
		os.RemoveAll(setupDir)
	}
	if testCli == nil {
		return code
	}
	// Nothing may be left behind by any test.
	left, err := testCli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+testExperimentPrefix))})
	if err == nil && len(left) > 0 {
		fmt.Fprintf(os.Stderr, "%d container(s) left behind\n", len(left))
		return 1
	}
	return code
}

// needEngine skips t when no Docker engine answers (fails it in CI) or
// under -short; otherwise it connects and makes the workload image of
// this tree, once for the whole run.
func needEngine(t testing.TB) {
	t.Helper()
	enginetest.Need(t, "Docker engine", func() error {
		engineOnce.Do(setUpEngine)
		return engineErr
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

func setUpEngine() {
	cli, err := Connect()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = cli.Ping(ctx)
		cancel()
	}
	if err != nil {
		engineErr = err
		return
	}
	testCli = cli
	if setupDir, setupErr = os.MkdirTemp("", "headroom-test"); setupErr != nil {
		return
	}
	testImage, testBinary, setupErr = enginetest.WorkloadImage(context.Background(), &Platform{cli: cli}, setupDir)
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
	needEngine(t) // each test that starts one needs it, said or not
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
