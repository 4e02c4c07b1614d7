package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// Every trial gets a noise record: pressure where the kernel has it (here
// a copy of /proc/pressure's format), marked unavailable where it does
// not, and the neighbours that ran beside it.
func TestNoiseRecordedPerTrial(t *testing.T) {
	tasks := []model.Task{fake.Task("a", 64*model.MiB, "s"), fake.Task("b", 64*model.MiB, "s")}
	gate := make(chan struct{})
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "s" {
			return fake.StepPlan{Gate: gate}
		}
		return fake.StepPlan{}
	}}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"cpu":    "some avg10=82.32 avg60=86.23 avg300=85.83 total=1680916659\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"memory": "some avg10=21.61 avg60=10.18 avg300=5.34 total=90918175\nfull avg10=1.09 avg60=0.65 avg300=0.37 total=16182874\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		dir  string
		psi  bool
	}{{"with PSI", dir, true}, {"without", filepath.Join(dir, "absent"), false}} {
		t.Run(tc.name, func(t *testing.T) {
			old := runner.PressureDir
			runner.PressureDir = tc.dir
			t.Cleanup(func() { runner.PressureDir = old })
			gate = make(chan struct{})
			cfg := config(t, tasks)
			cfg.HostCPUs = 2
			cfg.Host = func() runner.HostLoad { return runner.HostLoad{AvailableBytes: 8 << 30, Load1: 3.5} }
			started := 0
			res := runSweep(t, b, cfg, context.Background(), func(e event.Event) {
				// Both trials are up before either may finish.
				if _, ok := e.(event.StepStarted); ok {
					if started++; started == 2 {
						close(gate)
					}
				}
			}).results
			for _, r := range res {
				n := r.Noise
				if n == nil {
					t.Fatalf("%s: no noise record", r.Task)
				}
				if n.PSI != tc.psi {
					t.Errorf("%s: PSI %v, want %v", r.Task, n.PSI, tc.psi)
				}
				if n.Neighbours != 1 {
					t.Errorf("%s: %d neighbours, want 1", r.Task, n.Neighbours)
				}
				// Load 3.5 on 2 CPUs is contended either way.
				if !n.Contended || n.Why != "load 3.5 on 2 CPUs" {
					t.Errorf("%s: contended %v (%q)", r.Task, n.Contended, n.Why)
				}
			}
		})
	}
}

// The host is followed over the trial, not only at its ends: a load that
// rose and fell while the trial ran makes it contended, and the least
// available memory seen is kept.
func TestNoiseFollowsTheHostDuringTheTrial(t *testing.T) {
	tasks := []model.Task{fake.Task("a", 64*model.MiB, "s")}
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		return fake.StepPlan{PeakBytes: 8 * model.MiB}
	}}
	cfg := config(t, tasks)
	cfg.HostCPUs = 2
	var mu sync.Mutex
	calls := 0
	cfg.Host = func() runner.HostLoad {
		mu.Lock()
		defer mu.Unlock()
		// The trial's start reads the quiet host; the burst is seen only by
		// the reading taken on the trial's first sample; the end is quiet.
		calls++
		if calls == 2 {
			return runner.HostLoad{AvailableBytes: 1 << 30, Load1: 9}
		}
		return runner.HostLoad{AvailableBytes: 8 << 30, Load1: 0.5}
	}
	res := runSweep(t, b, cfg, context.Background(), nil).results
	if len(res) != 1 {
		t.Fatalf("results %+v", res)
	}
	var n *model.HostNoise
	for _, r := range res {
		n = r.Noise
	}
	if n == nil {
		t.Fatal("no noise record")
	}
	if n.HostReadings < 1 || n.PeakLoad1 != 9 || n.MinAvailableBytes != 1<<30 {
		t.Errorf("readings %d, peak load %v, least available %d: want the burst's 9 and 1 GiB", n.HostReadings, n.PeakLoad1, n.MinAvailableBytes)
	}
	if !n.Contended || n.Why != "load 9.0 on 2 CPUs" {
		t.Errorf("contended %v (%q): the burst between start and end was missed", n.Contended, n.Why)
	}
}

// A trial cancelled before its container started ran beside nothing: it
// has no noise record (a cancelled demo counted 146 such trials as
// contended).
func TestNoNoiseForTrialsThatNeverRan(t *testing.T) {
	tasks := []model.Task{fake.Task("a", 64*model.MiB, "s")}
	gate := make(chan struct{})
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		return fake.StepPlan{Gate: gate}
	}}
	cfg := config(t, tasks, model.Ratio{K: 1}, model.Ratio{K: 3}, model.Uncapped)
	cfg.Concurrency = 1
	cfg.HostCPUs = 2
	cfg.Host = func() runner.HostLoad { return runner.HostLoad{AvailableBytes: 8 << 30, Load1: 3.5} }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := runSweep(t, b, cfg, ctx, func(e event.Event) {
		if _, ok := e.(event.StepStarted); ok {
			cancel()
			close(gate)
		}
	}).results
	never := 0
	for _, r := range res {
		if r.ContainerID == "" {
			never++
			if r.Noise != nil {
				t.Errorf("%s (%s, never started) has a noise record: %+v", r.ID, r.Outcome, *r.Noise)
			}
		} else if r.Noise == nil {
			t.Errorf("%s ran but has no noise record", r.ID)
		}
	}
	if never == 0 {
		t.Fatalf("no trial was cancelled before it started: the test proves nothing (%d results)", len(res))
	}
}
