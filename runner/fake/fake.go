// Package fake is a scripted runner.Backend for tests and demos: no
// engine, deterministic steps, OOM kills on demand.
package fake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// StepPlan is what one step does in the fake.
type StepPlan struct {
	Lines    []string
	ExitCode int
	// OOM sends a kill signal during the step; LateOOM sends it only after
	// the step has returned (the kernel's notice trailing the exit).
	OOM, LateOOM bool
	PeakBytes    int64
	// CPU is what the step adds to the sandbox's CPU counters.
	CPU model.CPUUse
	// Block makes the step run until its context ends or the sandbox is
	// killed.
	Block bool
	// Gate, if set, holds the step until it is closed.
	Gate <-chan struct{}
	// ExecErr is the engine failing under the step.
	ExecErr error
	// StripStderrMark drops the "!" that marks a stderr line.
	StripStderrMark bool
	// Writes are files the step leaves in the sandbox (path → content),
	// for ReadFile.
	Writes map[string]string
}

// TraceNonce in a line stands for the traced step's nonce, which only the
// traced shell knows: a line with it is the shell's trace line, one
// without it what a command printed.
const TraceNonce = "{trace-nonce}"

// TraceLine is a trace line as the traced shell writes it for a command
// at depth levels of nesting, with the status fields bash's PS4 reports
// ("$?|PIPESTATUS|BASHPID|$$|function depth|$!").
func TraceLine(depth int, fields, cmd string) string {
	return strings.Repeat("\x1e", depth) + runner.TraceMarker + TraceNonce + " " + fields + "] " + cmd
}

// Script decides what each step does.
type Script func(trial model.Trial, step model.Step) StepPlan

// Backend is the fake engine.
type Backend struct {
	Script   Script
	StartErr error
	// Pending, when set, is said (StartRequest.Waiting) before each sandbox
	// starts, as a platform whose scheduler holds a pod would.
	Pending string
	// PendingFor is how long the platform held each sandbox queued
	// (runner.QueueWaiter).
	PendingFor time.Duration
	// RemovesFiles makes sandboxes remove files themselves
	// (runner.FileRemover), as the Docker backend's step driver does;
	// without it they refuse and an rm is exec'd.
	RemovesFiles bool
	// KillsOnTimeout makes sandboxes unable to stop a timed-out step
	// alone (runner.StepStopper fails): the container goes with it, as on
	// a platform that cannot read the container's processes.
	KillsOnTimeout bool
	// CopyInWrites are files a CopyIn with a source leaves in the
	// sandbox (path → content): what a separate verifier's artifacts
	// carry.
	CopyInWrites map[string]string
	// CopyInErr fails every CopyIn.
	CopyInErr error
	// CopyOutErr fails every CopyOut (a separate verifier's artifacts).
	CopyOutErr error
	// CopyInTakes makes every CopyIn take this long (or until its
	// context ends, whose error it then returns), as a large copy does.
	CopyInTakes time.Duration
	// CopyOutTakes makes every CopyOut take this long (or until its
	// context ends, whose error it then returns): many artifacts.
	CopyOutTakes time.Duration

	mu         sync.Mutex
	running    int
	maxRunning int
	started    []string
	removed    []string
	killed     []string
	uploaded   []string
	stepsStop  []string
}

// Start creates a fake sandbox.
func (b *Backend) Start(ctx context.Context, req runner.StartRequest) (runner.Sandbox, error) {
	trial := req.Trial
	if b.StartErr != nil {
		return nil, b.StartErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.Pending != "" {
		req.Wait(b.Pending)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running++
	b.maxRunning = max(b.maxRunning, b.running)
	b.started = append(b.started, trial.ID)
	return &sandbox{b: b, trial: trial, samples: make(chan event.Sample, 64), ooms: make(chan runner.OOMSignal, 16), killed: make(chan struct{})}, nil
}

// Close does nothing.
func (b *Backend) Close() error { return nil }

// MaxRunning is the most sandboxes that were alive at once.
func (b *Backend) MaxRunning() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxRunning
}

// Started, Removed and Killed list trial ids in order.
func (b *Backend) Started() []string { return b.list(&b.started) }

// Removed lists removed sandboxes' trial ids.
func (b *Backend) Removed() []string { return b.list(&b.removed) }

// Killed lists killed sandboxes' trial ids.
func (b *Backend) Killed() []string { return b.list(&b.killed) }

// StepsStopped lists the trial ids whose timed-out steps were stopped
// alone, the sandbox kept.
func (b *Backend) StepsStopped() []string { return b.list(&b.stepsStop) }

func (b *Backend) list(l *[]string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), *l...)
}

type sandbox struct {
	b       *Backend
	trial   model.Trial
	samples chan event.Sample
	ooms    chan runner.OOMSignal

	mu       sync.Mutex
	kills    int
	peak     int64
	cpu      model.CPUUse
	oomEver  bool
	killed   chan struct{}
	killOnce sync.Once
	closed   bool
	files    map[string]string
}

// QueuedFor is the Backend's PendingFor.
func (s *sandbox) QueuedFor() time.Duration { return s.b.PendingFor }

func (s *sandbox) ID() string                    { return "fake-" + s.trial.ID }
func (s *sandbox) SampleSource() string          { return "fake" }
func (s *sandbox) StepRunner() string            { return "fake" }
func (s *sandbox) Samples() <-chan event.Sample  { return s.samples }
func (s *sandbox) OOMs() <-chan runner.OOMSignal { return s.ooms }

func (s *sandbox) oom() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.kills++
	s.oomEver = true
	s.ooms <- runner.OOMSignal{Time: time.Now(), Source: "fake", Count: s.kills}
}

// CopyIn records what would be copied (trial id: to ← from).
func (s *sandbox) CopyIn(ctx context.Context, uploads []model.Upload) error {
	if s.b.CopyInErr != nil {
		return s.b.CopyInErr
	}
	if s.b.CopyInTakes > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("copying into the fake sandbox: %w", ctx.Err())
		case <-time.After(s.b.CopyInTakes):
		}
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	for _, u := range uploads {
		s.b.uploaded = append(s.b.uploaded, s.trial.ID+": "+u.To+" <- "+u.From)
		if u.From == "" {
			continue
		}
		s.mu.Lock()
		for k, v := range s.b.CopyInWrites {
			if s.files == nil {
				s.files = map[string]string{}
			}
			s.files[k] = v
		}
		s.mu.Unlock()
	}
	return nil
}

// CopyOut copies nothing, or fails with the backend's CopyOutErr.
func (s *sandbox) CopyOut(ctx context.Context, _, _ string, _ *runner.CopyBudget) error {
	if s.b.CopyOutTakes > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("copying out of the fake sandbox: %w", ctx.Err())
		case <-time.After(s.b.CopyOutTakes):
		}
	}
	return s.b.CopyOutErr
}

// RemoveFiles removes files without an exec when the backend says so.
func (s *sandbox) RemoveFiles(_ context.Context, paths []string) (bool, error) {
	if !s.b.RemovesFiles {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range paths {
		delete(s.files, p)
	}
	return true, nil
}

// Uploaded lists what CopyIn was asked to copy, in order.
func (b *Backend) Uploaded() []string { return b.list(&b.uploaded) }

// ReadFile returns what a step's plan wrote.
func (s *sandbox) ReadFile(_ context.Context, p string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.files[p]; ok {
		return []byte(c), nil
	}
	return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
}

func (s *sandbox) Exec(ctx context.Context, argv, env []string, _ string, line func(stream, text string)) (runner.ExecResult, error) {
	env, _ = runner.SplitTerminal(env)
	env, _ = runner.SplitHold(env)
	step := model.Step{Argv: argv, Env: env}
	if len(argv) > 0 {
		step.Name = argv[len(argv)-1]
	}
	p := s.b.Script(s.trial, step)
	if p.ExecErr != nil {
		return runner.ExecResult{}, p.ExecErr
	}
	s.mu.Lock()
	if len(argv) > 0 && argv[0] == "rm" {
		for _, f := range argv[1:] {
			delete(s.files, f) // what the sandbox's files lose, as rm -rf would
		}
	}
	for k, v := range p.Writes {
		if s.files == nil {
			s.files = map[string]string{}
		}
		s.files[k] = v
	}
	s.peak = max(s.peak, p.PeakBytes)
	s.cpu = s.cpu.Add(p.CPU)
	if !s.closed {
		s.samples <- event.Sample{Time: time.Now(), UsageBytes: p.PeakBytes, WorkingSetBytes: p.PeakBytes}
	}
	s.mu.Unlock()
	nonce := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, runner.TraceNonceVar+"="); ok {
			nonce = v
		}
	}
	for _, l := range p.Lines {
		// The traced shell knows its step's nonce; the script's commands do not.
		l = strings.ReplaceAll(l, TraceNonce, nonce)
		stream := "stdout"
		if strings.HasPrefix(l, "!") {
			stream = "stderr"
			if p.StripStderrMark {
				l = l[1:]
			}
		}
		line(stream, l)
	}
	if p.OOM {
		s.oom()
	}
	if p.Block {
		select {
		case <-ctx.Done():
			return runner.ExecResult{}, ctx.Err()
		case <-s.killed:
			return runner.ExecResult{ExitCode: 137}, nil
		}
	}
	if p.Gate != nil {
		select {
		case <-p.Gate:
		case <-ctx.Done():
			return runner.ExecResult{}, ctx.Err()
		}
	}
	if p.LateOOM {
		go s.oom()
	}
	return runner.ExecResult{ExitCode: p.ExitCode}, nil
}

func (s *sandbox) CPUUse() (model.CPUUse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cpu, true
}

func (s *sandbox) TakeKernelPeak() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	s.peak = 0
	return p, true
}

// StopSteps stops a timed-out step's processes and keeps the sandbox (a
// fake step has none left once its Exec returned), unless the backend
// KillsOnTimeout.
func (s *sandbox) StopSteps(context.Context) error {
	if s.b.KillsOnTimeout {
		return errors.New("this fake platform cannot stop a step alone")
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.stepsStop = append(s.b.stepsStop, s.trial.ID)
	return nil
}

var _ runner.StepStopper = (*sandbox)(nil)

func (s *sandbox) Kill(context.Context) error {
	s.killOnce.Do(func() {
		close(s.killed)
		s.b.mu.Lock()
		s.b.killed = append(s.b.killed, s.trial.ID)
		s.b.mu.Unlock()
	})
	return nil
}

func (s *sandbox) Remove(context.Context) (runner.Final, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return runner.Final{}, errors.New("removed twice")
	}
	s.closed = true
	close(s.samples)
	close(s.ooms)
	f := runner.Final{OOMKilled: s.oomEver}
	s.mu.Unlock()
	s.b.mu.Lock()
	s.b.running--
	s.b.removed = append(s.b.removed, s.trial.ID)
	s.b.mu.Unlock()
	return f, nil
}

// Task makes a task with the given agent steps (by name) and a verifier
// step named "verify", for use with a Script that switches on step names.
func Task(name string, memory int64, steps ...string) model.Task {
	t := model.Task{Name: name, Image: "fake", Resources: model.Resources{CPUs: 1, MemoryBytes: memory, PidsLimit: 64},
		AgentTimeout: time.Minute, VerifierTimeout: time.Minute, Verifier: model.Step{Name: "verify", Argv: []string{"verify"}}}
	a := model.Agent{Name: "agent"}
	for _, s := range steps {
		a.Steps = append(a.Steps, model.Step{Name: s, Show: fmt.Sprintf("run %s", s), Argv: []string{s}})
	}
	t.Agents = []model.Agent{a}
	return t
}
