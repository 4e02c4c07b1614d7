package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// A step that prints many short lines (`yes | head -n 50000000`), through
// the runner, the sweep's recording and the store, with the fake backend:
// what headroom spends a line, beside what the step does. Reported as
// ns/line; 2 million lines of "y", 4 MB, past a step's 1 MiB head. The
// same run side by side (2 CPUs, 2026-12-06): the sweep's loop putting
// every event on the heap at a TrialEnded's size (before annotated), 1,700
// ns/line; after it, an event a line, 874; a step's output past its head
// held and sent as its tail (runner.emitOutput), 284.
//
//	go test -run '^$' -bench SweepOutputLines -benchtime 3x ./session
func BenchmarkSweepOutputLines(b *testing.B) {
	const lines = 2_000_000
	out := strings.Split(strings.Repeat("y\n", lines-1)+"y", "\n")
	plat := &fake.Platform{
		Backend: &fake.Backend{Script: func(model.Trial, model.Step) fake.StepPlan { return fake.StepPlan{Lines: out} }},
		Info:    runner.PlatformInfo{Backend: "fake-lines", Version: "v1", AdmitsItself: true, Host: runner.HostInfo{CPUs: 2, MemoryBytes: 4 << 30}},
	}
	runner.Register(plat.Definition("fake-lines"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	eng, err := Connect(ctx, "fake-lines", nil)
	if err != nil {
		b.Fatal(err)
	}
	task := fake.Task("bench/lines", 64*model.MiB, "s")
	annotate := func(r *model.TrialResult) {}
	b.ResetTimer()
	for range b.N {
		sw, err := eng.Launch(ctx, Spec{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}}, Repeats: 1, Concurrency: 1, Seed: 1, OutRoot: b.TempDir(), Annotate: annotate})
		if err != nil {
			b.Fatal(err)
		}
		for range sw.Events() {
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
}
