package session

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
)

// Spec is one sweep to run.
type Spec struct {
	Tasks       []model.Task // "builtin" images are resolved here
	Agents      []string
	Ratios      []model.Ratio
	Repeats     int
	Concurrency int
	Seed        uint64
	// OnlyRepeat replays just that repeat (an exact rerun).
	OnlyRepeat int
	// OutRoot holds experiment directories.
	OutRoot      string
	ReserveBytes int64
	SampleEvery  time.Duration
	// Keep leaves finished containers for inspection (headroom clean).
	Keep    bool
	Version string
	// Progress receives image build output.
	Progress func(string)
}

// InputError is a problem with what the user asked for (a usage error).
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// Sweep is a running sweep. Its Events are recorded to the store before
// they are handed on; read them to the end.
type Sweep struct {
	ID   string
	Dir  string
	Plan model.Plan

	events  chan runner.Event
	run     *runner.Runner
	backend *docker.Backend
	exp     *store.Experiment
	cancel  context.CancelFunc

	mu       sync.Mutex
	storeErr error
}

// Launch checks, plans and starts a sweep. Nothing starts if the plan
// cannot fit the host, an image is missing or the store is not writable.
func (e *Engine) Launch(ctx context.Context, spec Spec) (*Sweep, error) {
	tasks := append([]model.Task(nil), spec.Tasks...)
	capacity := e.Capacity(spec.ReserveBytes)
	plan, err := model.NewPlan(model.PlanSpec{Tasks: tasks, Agents: spec.Agents, Ratios: spec.Ratios, Repeats: spec.Repeats, Seed: spec.Seed, HostCPUs: e.Host.CPUs, OnlyRepeat: spec.OnlyRepeat})
	if err != nil {
		return nil, InputError{err}
	}
	if err := runner.CheckGuarantees(plan, capacity); err != nil {
		return nil, InputError{err}
	}
	if taskfile.UsesBuiltinImage(tasks) {
		tag, err := e.WorkloadImage(ctx, false, spec.Progress)
		if err != nil {
			return nil, err
		}
		taskfile.ResolveImages(tasks, tag)
	}
	imageIDs, err := e.checkImages(ctx, tasks)
	if err != nil {
		return nil, err
	}
	id := store.NewID(time.Now())
	host := e.Host
	host.ReserveBytes, host.GuaranteeCapacityBytes = spec.ReserveBytes, capacity
	m := store.Manifest{
		ID: id, Created: time.Now(), Status: "running", Command: os.Args, Version: spec.Version,
		Ratios: spec.Ratios, Repeats: spec.Repeats, Seed: spec.Seed, Concurrency: spec.Concurrency, Trials: len(plan.Trials),
		Host: host, Engine: e.Info,
	}
	for _, t := range tasks {
		te := store.NewTaskEntry(t, spec.Ratios, e.Host.CPUs)
		te.ImageID = imageIDs[t.Image]
		m.Tasks = append(m.Tasks, te)
	}
	b, err := docker.New(ctx, e.Cli, docker.Options{SampleEvery: spec.SampleEvery, Keep: spec.Keep})
	if err != nil {
		return nil, err
	}
	run, err := runner.New(b, runner.Config{Experiment: id, Plan: plan, Tasks: tasks, Concurrency: spec.Concurrency, GuaranteeCapacityBytes: capacity})
	if err != nil {
		b.Close()
		return nil, err
	}
	exp, err := store.Create(spec.OutRoot, m)
	if err != nil {
		b.Close()
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	s := &Sweep{ID: id, Dir: exp.Dir, Plan: plan, events: make(chan runner.Event, 4096), run: run, backend: b, exp: exp, cancel: cancel}
	raw := make(chan runner.Event, 1024)
	go run.Run(rctx, raw)
	go s.record(raw)
	return s, nil
}

// record is the store's place in the stream: every event is recorded,
// then handed on. A store failure stops the sweep (its trials still end
// and clean up) and is reported by Err.
func (s *Sweep) record(raw <-chan runner.Event) {
	defer close(s.events)
	defer s.backend.Close()
	defer s.exp.Close()
	for ev := range raw {
		if err := s.exp.Record(ev); err != nil {
			s.mu.Lock()
			if s.storeErr == nil {
				s.storeErr = fmt.Errorf("recording results in %s failed: %w", s.Dir, err)
				s.cancel()
			}
			s.mu.Unlock()
		}
		s.events <- ev
	}
}

// Events is the sweep's event stream; it closes after SweepEnded.
func (s *Sweep) Events() <-chan runner.Event { return s.events }

// StopTrial stops one trial; it ends as cancelled.
func (s *Sweep) StopTrial(id string) bool { return s.run.StopTrial(id) }

// Cancel stops the whole sweep: running trials are stopped, removed and
// recorded as cancelled.
func (s *Sweep) Cancel() { s.cancel() }

// Err is the store's failure, if recording failed.
func (s *Sweep) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeErr
}
