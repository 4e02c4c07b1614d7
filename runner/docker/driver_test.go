package docker

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// The end marker may follow a last line the step left open; the line is
// kept, and the step ends only when both streams have their marker.
func TestDriverSplitsTheEndMarkerOffBothStreams(t *testing.T) {
	d := &driver{}
	var got []string
	c := &driven{end: "\x1e[headroom-end 01]", done: make(chan struct{}), line: func(stream, text string) { got = append(got, stream+":"+text) }}
	d.cur = c
	out, errs := d.lineFrom("stdout"), d.lineFrom("stderr")
	out("first")
	out("open\x1e[headroom-end 01] 3")
	select {
	case <-c.done:
		t.Fatal("done after one stream's marker: stderr may still have lines")
	default:
	}
	errs("late")
	errs("\x1e[headroom-end 01] 3")
	<-c.done
	if want := []string{"stdout:first", "stdout:open", "stderr:late"}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if c.code != 3 {
		t.Errorf("exit code %d, want 3", c.code)
	}
	d.cur = nil
	out("stray") // nothing running: dropped, not a panic
}

// When the container dies under a step, the step ends as an exec'd one
// would (killed, 137) and a later step is an error, not a hang.
func TestDriverEndsWithItsContainer(t *testing.T) {
	b := newBackend(t, Options{})
	task := parseTask(t, enginetest.HeavyInstall)
	tr := model.Trial{ID: "driver-dies", Task: task.Name, Ratio: model.Uncapped, Policy: model.NewPolicy(task.Resources, model.Uncapped, 2)}
	sb, err := b.Start(context.Background(), testExperimentPrefix, tr, task)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove(context.Background())
	if sb.StepRunner() != runner.StepsByDriver {
		t.Fatalf("step runner %q, want %q", sb.StepRunner(), runner.StepsByDriver)
	}
	go func() {
		for range sb.Samples() {
		}
	}()
	long, err := workload.Profile{Style: "pip", Packages: []string{"pandas"}, DurationMS: 60000, BaseMB: 2}.Argv("long")
	if err != nil {
		t.Fatal(err)
	}
	printing := make(chan struct{})
	var once bool
	res, err := sb.Exec(context.Background(), long, nil, "", func(stream, text string) {
		if !once {
			once = true
			close(printing)
			go sb.Kill(context.Background())
		}
	})
	if err != nil || res.ExitCode != 137 {
		t.Fatalf("step under a killed container: exit %d, %v; want 137, nil", res.ExitCode, err)
	}
	<-printing
	if _, err := sb.Exec(context.Background(), long, nil, "", func(string, string) {}); !errors.Is(err, errDriverGone) {
		t.Errorf("a step after the container died: %v, want %v", err, errDriverGone)
	}
}
