package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
			res := runSweep(t, b, cfg, context.Background(), func(e runner.Event) {
				// Both trials are up before either may finish.
				if _, ok := e.(runner.StepStarted); ok {
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
