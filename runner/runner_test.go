package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

type sweepResult struct {
	results map[string]model.TrialResult // by task name
	events  []event.Event
}

func runSweep(t *testing.T, b runner.Backend, cfg runner.Config, ctx context.Context, onEvent func(event.Event)) sweepResult {
	t.Helper()
	r, err := runner.New(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 16)
	go r.Run(ctx, out)
	res := sweepResult{results: map[string]model.TrialResult{}}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e, ok := <-out:
			if !ok {
				return res
			}
			res.events = append(res.events, e)
			if onEvent != nil {
				onEvent(e)
			}
			if te, ok := e.(event.TrialEnded); ok {
				res.results[te.Result.Task+"@"+te.Result.Ratio.String()] = te.Result
			}
		case <-timeout:
			t.Fatal("sweep did not end")
		}
	}
}

func config(t *testing.T, tasks []model.Task, ratios ...model.Ratio) runner.Config {
	t.Helper()
	if len(ratios) == 0 {
		ratios = []model.Ratio{{K: 1}}
	}
	plan, err := model.NewPlan(model.PlanSpec{Tasks: tasks, Ratios: ratios, Repeats: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return runner.Config{Experiment: "x", Plan: plan, Tasks: tasks, Concurrency: 2, GuaranteeCapacityBytes: 1 << 30, OOMSettle: 2 * time.Second}
}

// script maps "task/step" to a plan; unknown steps pass quietly.
func script(m map[string]fake.StepPlan) fake.Script {
	return func(tr model.Trial, st model.Step) fake.StepPlan {
		return m[tr.Task+"/"+st.Name]
	}
}

func TestOutcomesThroughTheRunner(t *testing.T) {
	tasks := []model.Task{
		fake.Task("killed", 64*model.MiB, "install", "fit"),
		fake.Task("survived", 64*model.MiB, "build"),
		fake.Task("wrong", 64*model.MiB, "edit"),
		fake.Task("clean", 64*model.MiB, "edit"),
		fake.Task("late", 64*model.MiB, "install"),
	}
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{
		"killed/install":  {Lines: []string{"Collecting pandas"}, ExitCode: 137, OOM: true, PeakBytes: 64 * model.MiB},
		"killed/verify":   {ExitCode: 1},
		"survived/build":  {OOM: true, Lines: []string{"retrying with -j1"}},
		"wrong/verify":    {ExitCode: 1, Lines: []string{"!AssertionError"}},
		"late/install":    {ExitCode: 137, LateOOM: true},
		"late/verify":     {ExitCode: 1},
		"clean/edit":      {PeakBytes: 10 * model.MiB},
		"survived/verify": {},
	})}
	got := runSweep(t, b, config(t, tasks), context.Background(), nil).results
	want := map[string]model.Outcome{"killed": model.OOMKilled, "survived": model.PassedAfterOOM, "wrong": model.Failed, "clean": model.Passed, "late": model.OOMKilled}
	for task, o := range want {
		r := got[task+"@1x"]
		if r.Outcome != o {
			t.Errorf("%s: %s (%s), want %s", task, r.Outcome, r.Reason, o)
		}
	}
	k := got["killed@1x"]
	if k.KilledInStep != "install" || len(k.Steps) != 2 || k.Steps[0].OOMKills != 1 || k.Steps[1].Phase != "verifier" {
		t.Errorf("killed: step %q, steps %+v (the agent stops after the killed step; the verifier still runs)", k.KilledInStep, k.Steps)
	}
	// The kernel's mark, not the sampled working set: the fake's one
	// sample is read by the sampler goroutine, which a loaded machine can
	// run after the step has ended (peak 0, seen once).
	if k.Steps[0].Output != "Collecting pandas" || k.Steps[0].KernelPeakBytes != 64*model.MiB {
		t.Errorf("killed: install output %q kernel peak %d", k.Steps[0].Output, k.Steps[0].KernelPeakBytes)
	}
	if !strings.Contains(k.Reason, "install") {
		t.Errorf("reason %q should name the step", k.Reason)
	}
	if got["late@1x"].KilledInStep != "install" {
		t.Errorf("late OOM notice must still be attributed to install: %+v", got["late@1x"].OOMs)
	}
	if len(b.Removed()) != len(tasks) {
		t.Errorf("removed %v, want every sandbox", b.Removed())
	}
}

func TestInfraErrorWhenTheSandboxCannotStart(t *testing.T) {
	b := &fake.Backend{StartErr: errors.New("image missing"), Script: script(nil)}
	got := runSweep(t, b, config(t, []model.Task{fake.Task("t", 64*model.MiB, "s")}), context.Background(), nil).results
	if r := got["t@1x"]; r.Outcome != model.InfraError || !strings.Contains(r.Reason, "image missing") {
		t.Errorf("%s %q", r.Outcome, r.Reason)
	}
}

func TestEngineFailureMidTrialIsAnInfraError(t *testing.T) {
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{"gone/install": {ExecErr: errors.New("Cannot connect to the Docker daemon")}})}
	r := runSweep(t, b, config(t, []model.Task{fake.Task("gone", 64*model.MiB, "install")}), context.Background(), nil).results["gone@1x"]
	if r.Outcome != model.InfraError || !strings.Contains(r.Reason, "Cannot connect") || len(r.Steps) != 1 {
		t.Errorf("%s %q steps %d: want infra-error naming the engine, no verifier", r.Outcome, r.Reason, len(r.Steps))
	}
	if len(b.Removed()) != 1 {
		t.Error("the sandbox must still be removed")
	}
}

// TestATimedOutAgentsWorkIsGraded: Harbor and terminal-bench run the
// verifier after an agent timeout and its reward stands; so does
// headroom, with the timeout named.
func TestATimedOutAgentsWorkIsGraded(t *testing.T) {
	for _, verdict := range []struct {
		exit    int
		outcome model.Outcome
		reason  string
	}{
		{0, model.PassedAfterTimeout, "the verifier, run after it as Harbor and terminal-bench run it, passed"},
		{1, model.Timeout, "the verifier, run after it as Harbor and terminal-bench run it, failed"},
	} {
		task := fake.Task("slow", 64*model.MiB, "think")
		task.AgentTimeout = 20 * time.Millisecond
		b := &fake.Backend{Script: script(map[string]fake.StepPlan{"slow/think": {Block: true}, "slow/verify": {ExitCode: verdict.exit}})}
		r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["slow@1x"]
		if r.Outcome != verdict.outcome || r.Cause != model.CauseAgentTimeout || !r.Steps[0].TimedOut || len(r.Steps) != 2 || !strings.Contains(r.Reason, verdict.reason) {
			t.Errorf("verifier exit %d: %s/%s %q steps %d, want %s after the verifier ran", verdict.exit, r.Outcome, r.Cause, r.Reason, len(r.Steps), verdict.outcome)
		}
		if got := b.StepsStopped(); len(got) != 1 {
			t.Errorf("the timed-out step must be stopped alone, its sandbox kept for the verifier: %v", got)
		}
	}
}

// TestATimedOutAgentWhoseContainerWentIsNotGraded: where the step cannot
// be stopped alone, the container goes with it and no verifier can run,
// as Harbor runs none once its environment is gone; the record says so.
func TestATimedOutAgentWhoseContainerWentIsNotGraded(t *testing.T) {
	task := fake.Task("slow", 64*model.MiB, "think")
	task.AgentTimeout = 20 * time.Millisecond
	b := &fake.Backend{KillsOnTimeout: true, Script: script(map[string]fake.StepPlan{"slow/think": {Block: true}})}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["slow@1x"]
	if r.Outcome != model.Timeout || !r.Steps[0].TimedOut || len(r.Steps) != 1 || !strings.Contains(r.Reason, "the verifier did not run") {
		t.Errorf("%s %q steps %d, want timeout with no verifier run, said", r.Outcome, r.Reason, len(r.Steps))
	}
	if len(b.Killed()) != 1 {
		t.Errorf("the timed-out sandbox must be killed: %v", b.Killed())
	}
}

// gatedSweep runs cfg's sweep on a fake backend whose every step holds
// until some trial has been seen waiting for admission, and returns the
// backend, the results and the waiting reasons in order.
func gatedSweep(t *testing.T, cfg runner.Config) (*fake.Backend, sweepResult, []string) {
	t.Helper()
	gate := make(chan struct{})
	b := &fake.Backend{Script: func(model.Trial, model.Step) fake.StepPlan { return fake.StepPlan{Gate: gate} }}
	var waits []string
	res := runSweep(t, b, cfg, context.Background(), func(e event.Event) {
		if w, ok := e.(event.TrialWaiting); ok {
			if len(waits) == 0 {
				close(gate)
			}
			waits = append(waits, w.Reason)
		}
	})
	return b, res, waits
}

func TestAdmissionHoldsTrialsWhoseGuaranteeDoesNotFit(t *testing.T) {
	var tasks []model.Task
	for _, n := range []string{"a", "b", "c"} {
		tasks = append(tasks, fake.Task(n, 600*model.MiB, "s"))
	}
	cfg := config(t, tasks)
	cfg.Concurrency = 3
	cfg.GuaranteeCapacityBytes = 1 << 30 // room for one 600MiB guarantee at a time
	b, res, waits := gatedSweep(t, cfg)
	if b.MaxRunning() != 1 {
		t.Errorf("%d sandboxes ran at once; guarantees allow 1", b.MaxRunning())
	}
	if len(res.results) != 3 {
		t.Errorf("%d results", len(res.results))
	}
	if len(waits) == 0 || !strings.Contains(waits[0], "guaranteed memory") {
		t.Errorf("waiting reasons %q", waits)
	}
}

func TestHostPressurePausesAdmissionsAndIsRecorded(t *testing.T) {
	cfg := config(t, []model.Task{fake.Task("t", 64*model.MiB, "s")})
	var mu sync.Mutex
	avail := int64(100 * model.MiB) // under the floor until a waiting event is seen
	cfg.FloorBytes = 512 * model.MiB
	cfg.Host = func() runner.HostLoad {
		mu.Lock()
		defer mu.Unlock()
		return runner.HostLoad{AvailableBytes: avail, Load1: 1.5}
	}
	var reasons []string
	res := runSweep(t, &fake.Backend{Script: script(nil)}, cfg, context.Background(), func(e event.Event) {
		if w, ok := e.(event.TrialWaiting); ok {
			reasons = append(reasons, w.Reason)
			mu.Lock()
			avail = 8 << 30
			mu.Unlock()
		}
	}).results["t@1x"]
	if len(reasons) == 0 || !strings.Contains(reasons[0], "host memory under pressure") {
		t.Errorf("waiting reasons %q", reasons)
	}
	if res.Outcome != model.Passed || len(res.HostPauses) != 1 || res.HostAtStart.AvailableBytes != 8<<30 || res.HostAtEnd.Load1 != 1.5 {
		t.Errorf("result %s pauses %v start %+v end %+v", res.Outcome, res.HostPauses, res.HostAtStart, res.HostAtEnd)
	}
}

func TestGuaranteeLargerThanHostIsRefusedUpFront(t *testing.T) {
	cfg := config(t, []model.Task{fake.Task("huge", 4<<30, "s")})
	_, err := runner.New(&fake.Backend{}, cfg)
	if err == nil || !strings.Contains(err.Error(), "huge guarantees 4GiB") {
		t.Errorf("error %v", err)
	}
}

func TestCancelStopsEverythingAndRemovesSandboxes(t *testing.T) {
	tasks := []model.Task{fake.Task("a", 64*model.MiB, "s"), fake.Task("b", 64*model.MiB, "s"), fake.Task("c", 64*model.MiB, "s")}
	cfg := config(t, tasks, model.Ratio{K: 1}, model.Uncapped)
	b := &fake.Backend{Script: func(model.Trial, model.Step) fake.StepPlan { return fake.StepPlan{Block: true} }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	res := runSweep(t, b, cfg, ctx, func(e event.Event) {
		if _, ok := e.(event.StepStarted); ok {
			if started++; started == 2 {
				cancel()
			}
		}
	})
	if len(res.results) != 6 {
		t.Fatalf("%d results, want all 6 recorded", len(res.results))
	}
	for k, r := range res.results {
		if r.Outcome != model.Cancelled {
			t.Errorf("%s: %s", k, r.Outcome)
		}
	}
	if len(b.Started()) != len(b.Removed()) {
		t.Errorf("started %v removed %v", b.Started(), b.Removed())
	}
	last := res.events[len(res.events)-1].(event.SweepEnded)
	if !last.Interrupted {
		t.Error("sweep end must say it was interrupted")
	}
}

func TestStopOneTrial(t *testing.T) {
	tasks := []model.Task{fake.Task("stuck", 64*model.MiB, "s"), fake.Task("fine", 64*model.MiB, "s")}
	b := &fake.Backend{Script: func(tr model.Trial, _ model.Step) fake.StepPlan { return fake.StepPlan{Block: tr.Task == "stuck"} }}
	r, err := runner.New(b, config(t, tasks))
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 16)
	go r.Run(context.Background(), out)
	results := map[string]model.Outcome{}
	for e := range out {
		if s, ok := e.(event.StepStarted); ok && s.Step.Name == "s" {
			for _, tr := range r.Plan().Trials {
				if tr.ID == s.TrialID() && tr.Task == "stuck" {
					r.StopTrial(tr.ID)
				}
			}
		}
		if te, ok := e.(event.TrialEnded); ok {
			results[te.Result.Task] = te.Result.Outcome
		}
	}
	if results["stuck"] != model.Cancelled || results["fine"] != model.Passed {
		t.Errorf("results %v", results)
	}
}

func TestEventOrderPerTrial(t *testing.T) {
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{"t/s": {Lines: []string{"one", "two"}, OOM: true}})}
	res := runSweep(t, b, config(t, []model.Task{fake.Task("t", 64*model.MiB, "s")}), context.Background(), nil)
	var kinds []string
	for _, e := range res.events {
		switch e.(type) {
		case event.SweepStarted:
			kinds = append(kinds, "sweep")
		case event.TrialQueued:
			kinds = append(kinds, "queued")
		case event.TrialStarted:
			kinds = append(kinds, "started")
		case event.StepStarted:
			kinds = append(kinds, "step")
		case event.OutputLine:
			kinds = append(kinds, "line")
		case event.StepEnded:
			kinds = append(kinds, "end-step")
		case event.TrialEnded:
			kinds = append(kinds, "end-trial")
		case event.SweepEnded:
			kinds = append(kinds, "end-sweep")
		}
	}
	want := "sweep queued started step line line end-step step end-step end-trial end-sweep"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
}

// A platform that places sandboxes itself says why one waits (a pod the
// scheduler cannot place), from within Start: the stream carries it as
// the trial's TrialWaiting, before its TrialStarted.
func TestBackendWaitingReachesTheStream(t *testing.T) {
	cfg := config(t, []model.Task{fake.Task("t", 64*model.MiB, "s")})
	b := &fake.Backend{Script: script(nil), Pending: "waiting: unschedulable (0/1 nodes: Insufficient memory)"}
	var order []string
	runSweep(t, b, cfg, context.Background(), func(e event.Event) {
		switch e := e.(type) {
		case event.TrialWaiting:
			order = append(order, "waiting "+e.Reason)
		case event.TrialStarted:
			order = append(order, "started")
		}
	})
	want := []string{"waiting " + b.Pending, "started"}
	if !slices.Equal(order, want) {
		t.Errorf("events %q, want %q", order, want)
	}
}

// A platform gone past its backend's wait (a cluster's API server) stops
// the sweep, interrupted and saying why, instead of failing every trial
// queued behind it: those end cancelled, for --resume to run.
func TestPlatformGoneStopsTheSweep(t *testing.T) {
	gone := fmt.Errorf("the kubernetes API server did not answer for 1m0s: %w", runner.ErrPlatformGone)
	b := &fake.Backend{StartErr: gone, Script: script(nil)}
	var tasks []model.Task
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		tasks = append(tasks, fake.Task(n, 64*model.MiB, "s"))
	}
	cfg := config(t, tasks)
	cfg.Concurrency = 1
	res := runSweep(t, b, cfg, context.Background(), nil)
	infra, cancelled := 0, 0
	for _, r := range res.results {
		switch r.Outcome {
		case model.InfraError:
			infra++
		case model.Cancelled:
			cancelled++
		}
	}
	if infra != 1 || cancelled != 5 {
		t.Errorf("%d infra-errors, %d cancelled; want the one that met it and 5 not run", infra, cancelled)
	}
	end, ok := res.events[len(res.events)-1].(event.SweepEnded)
	if !ok || !end.Interrupted || !strings.Contains(end.Why, "did not answer") {
		t.Errorf("the end: %+v", res.events[len(res.events)-1])
	}
}

// The time a platform holds an admitted trial queued (a pod
// unschedulable) is queue time, inside the trial's duration.
func TestPlatformQueueCountsInQueuedFor(t *testing.T) {
	b := &fake.Backend{Pending: "waiting: unschedulable (0/1 nodes are available)", PendingFor: 90 * time.Second, Script: script(nil)}
	got := runSweep(t, b, config(t, []model.Task{fake.Task("t", 64*model.MiB, "s")}), context.Background(), nil).results
	if r := got["t@1x"]; time.Duration(r.QueuedFor) < 90*time.Second {
		t.Errorf("queued_for %s leaves out the platform's 90s", time.Duration(r.QueuedFor))
	}
}

// A trial's end event is stamped when the trial ended, not when it was
// taken off the queue: the console ends a finished card's chart there.
func TestTrialEndedIsStampedAtTheEnd(t *testing.T) {
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{"t/s": {Lines: []string{"one"}}})}
	res := runSweep(t, b, config(t, []model.Task{fake.Task("t", 64*model.MiB, "s")}), context.Background(), nil)
	var started time.Time
	for _, e := range res.events {
		switch e := e.(type) {
		case event.TrialStarted:
			started = e.At()
		case event.TrialEnded:
			if e.At().Before(started) || e.At().Before(e.Result.End) {
				t.Errorf("TrialEnded at %s, before the trial started (%s) or ended (%s)", e.At(), started, e.Result.End)
			}
		}
	}
}

// Hold keeps queued trials from starting until it is let go (the
// console's quit prompt holds the queue; it went on starting trials while
// the prompt was open). Each held trial says why it waits.
func TestHoldKeepsQueuedTrialsFromStarting(t *testing.T) {
	cfg := config(t, []model.Task{fake.Task("a", 64*model.MiB, "s"), fake.Task("b", 64*model.MiB, "s")})
	cfg.Concurrency = 1
	r, err := runner.New(&fake.Backend{Script: script(nil)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Hold("the quit prompt is open")
	out := make(chan event.Event, 16)
	go r.Run(context.Background(), out)
	released, startedWhileHeld, ended := false, 0, 0
	timeout := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case e, ok := <-out:
			if !ok {
				done = true
				break
			}
			switch e := e.(type) {
			case event.TrialWaiting:
				if strings.HasPrefix(e.Reason, "held: the quit prompt is open") && !released {
					released = true
					r.Hold("")
				}
			case event.TrialStarted:
				if !released {
					startedWhileHeld++
				}
			case event.TrialEnded:
				ended++
			}
		case <-timeout:
			t.Fatal("sweep did not end")
		}
	}
	if !released || startedWhileHeld > 0 || ended != 2 {
		t.Errorf("held trial seen waiting %v, %d started while held, %d ended", released, startedWhileHeld, ended)
	}
}

// Harbor retries a verifier that timed out once (its VerifierTimeoutError
// retry); a Harbor task's verifier here too, and the record says so. A
// headroom task's verifier runs once.
func TestAHarborVerifierTimeoutIsRetriedOnce(t *testing.T) {
	for _, format := range []string{model.FormatHarbor, model.FormatHeadroom} {
		task := fake.Task("slowtests", 64*model.MiB, "work")
		task.Format = format
		task.VerifierTimeout = 20 * time.Millisecond
		script, runs := verifierRunsFirst(fake.StepPlan{Block: true}) // the first try runs past its limit
		b := &fake.Backend{Script: script}
		r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["slowtests@1x"]
		tries := *runs
		want, wantTries := model.Passed, 2
		if format != model.FormatHarbor {
			want, wantTries = model.Timeout, 1
		}
		if r.Outcome != want || tries != wantTries {
			t.Errorf("%s task: %s (%s) after %d verifier run(s), want %s after %d", format, r.Outcome, r.Reason, tries, want, wantTries)
		}
		if format == model.FormatHarbor && !strings.Contains(r.Reason, "was run again, as Harbor retries a verifier timeout once") {
			t.Errorf("the retry is not said: %q", r.Reason)
		}
	}
}

// Harbor's retry runs in the same /logs/verifier: a reward the first,
// timed-out attempt wrote is still read when the second writes none
// (the twentieth attacker's 3: it was cleared between them, and the
// trial failed, "the verifier wrote no reward", where Harbor passes).
func TestAHarborVerifierRetryKeepsTheFirstAttemptsReward(t *testing.T) {
	task := fake.Task("retryreward", 64*model.MiB, "work")
	task.Format = model.FormatHarbor
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	task.Verifier.Files = []model.Upload{{To: "/logs/verifier"}}
	task.VerifierTimeout = 20 * time.Millisecond
	script, runs := verifierRunsFirst(fake.StepPlan{Block: true, Writes: map[string]string{"/logs/verifier/reward.txt": "1"}})
	b := &fake.Backend{RemovesFiles: true, Script: script}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["retryreward@1x"]
	tries := *runs
	if r.Outcome != model.Passed || tries != 2 {
		t.Errorf("%s (%s) after %d verifier run(s); want passed on the first attempt's reward after 2", r.Outcome, r.Reason, tries)
	}
}

// verifierRunsFirst is a script whose verifier's first run is first and
// whose other steps and later runs are plain, and the count of the
// verifier's runs (read once the sweep has ended).
func verifierRunsFirst(first fake.StepPlan) (func(model.Trial, model.Step) fake.StepPlan, *int) {
	var mu sync.Mutex
	runs := 0
	return func(_ model.Trial, st model.Step) fake.StepPlan {
		if st.Name != "verify" {
			return fake.StepPlan{}
		}
		mu.Lock()
		defer mu.Unlock()
		runs++
		if runs == 1 {
			return first
		}
		return fake.StepPlan{}
	}, &runs
}

// An installed agent whose install fails ends its trial before the agent
// and the verifier, as Harbor's failed agent setup does: no reward.
func TestAFailedInstallEndsTheTrialBeforeItsVerifier(t *testing.T) {
	task := fake.Task("inst", 64*model.MiB, "solve")
	task.Agents[0].Install = []model.Step{{Name: "install", Argv: []string{"install"}}}
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{"inst/install": {ExitCode: 2}})}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["inst@1x"]
	if r.Outcome != model.Failed || len(r.Steps) != 1 || !strings.Contains(r.Reason, "the agent's install step install exited 2, so neither the agent nor the verifier ran") {
		t.Errorf("%s (%s) steps %d: want failed after the install alone, said", r.Outcome, r.Reason, len(r.Steps))
	}
}

// The task left something where a step's files go (a file in place of
// /tests): the copy's refusal is the step's failure, not the engine's.
func TestFilesTheTaskBlockedAreTheStepsFailure(t *testing.T) {
	task := fake.Task("blocked", 64*model.MiB, "work")
	task.Verifier.Files = []model.Upload{{From: "tests", To: "/tests"}}
	b := &fake.Backend{CopyInErr: fmt.Errorf("/tests is a file the task left: %w", runner.ErrTaskInterfered), Script: script(nil)}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["blocked@1x"]
	if r.Outcome != model.Failed || r.Cause == model.CauseEngineLost || !strings.Contains(r.Reason, "could not be put in place") {
		t.Errorf("%s/%s (%s), want the task's own failure", r.Outcome, r.Cause, r.Reason)
	}
}

// The same under a reward-file verdict (every Harbor task's): the
// verifier that could not be put in place did not run, so its reason is
// the files', not "the verifier wrote no reward", and a reward.txt the
// agent's own process writes after the clear (every exec here leaves
// one, the rm of the clear too) is not read as the verifier's: it
// passed the trial (what make hostile's row for issue #40's item 12
// recorded through the real binary).
func TestFilesTheTaskBlockedAreTheRewardVerdictsReason(t *testing.T) {
	task := fake.Task("blocked", 64*model.MiB, "work")
	task.Verifier.Files = []model.Upload{{From: "tests", To: "/tests"}}
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	writer := func(model.Trial, model.Step) fake.StepPlan {
		return fake.StepPlan{Writes: map[string]string{"/logs/verifier/reward.txt": "1\n"}}
	}
	b := &fake.Backend{CopyInErr: fmt.Errorf("/tests is a file the task left: %w", runner.ErrTaskInterfered), Script: writer}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["blocked@1x"]
	if r.Outcome != model.Failed || r.Cause == model.CauseEngineLost || !strings.Contains(r.Reason, "could not be put in place") || strings.Contains(r.Reason, "wrote no reward") {
		t.Errorf("%s/%s (%s), want the task's own failure, the files named", r.Outcome, r.Cause, r.Reason)
	}
}

// A verifier's files are copied under its clock, as Harbor's verifier
// uploads tests/ from its timeout's budget: a copy longer than the
// verifier's time limit (a 600 MiB fixture in tests/) is the verifier's
// timeout, the copy named, not "the engine went away" (it was, through
// the real binary, before).
func TestVerifierFilesCopyCountsInItsTime(t *testing.T) {
	task := fake.Task("bigtests", 64*model.MiB, "work")
	task.Verifier.Files = []model.Upload{{From: "tests", To: "/tests"}}
	task.VerifierTimeout = 50 * time.Millisecond
	b := &fake.Backend{CopyInTakes: time.Minute, Script: script(nil)}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["bigtests@1x"]
	if r.Outcome != model.Timeout || r.Cause != model.CauseVerifierTimeout || !strings.Contains(r.Reason, "while its files (/tests) were being copied") {
		t.Errorf("%s/%s (%s), want the verifier's timeout, the copy named", r.Outcome, r.Cause, r.Reason)
	}
}

// An agent step's files copied past the agent's time limit: the agent's
// timeout (its uploads count in its time, as Harbor's do), not the engine.
func TestAgentFilesCopiedPastItsLimitAreItsTimeout(t *testing.T) {
	task := fake.Task("bigsolve", 64*model.MiB, "work")
	task.Agents[0].Steps[0].Files = []model.Upload{{From: "solution", To: "/solution"}}
	task.AgentTimeout = 50 * time.Millisecond
	b := &fake.Backend{CopyInTakes: time.Minute, Script: script(nil)}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["bigsolve@1x"]
	if r.Cause == model.CauseEngineLost || r.Outcome == model.InfraError || !strings.Contains(r.Reason, "while its files (/solution) were being copied") {
		t.Errorf("%s/%s (%s), want the agent's timeout, the copy named", r.Outcome, r.Cause, r.Reason)
	}
	if testing.Verbose() {
		t.Log(r.Outcome, r.Cause, r.Reason)
	}
}

// A separate verifier's artifacts past what headroom takes (the agent
// left a 2 GiB file in /logs/artifacts) are the task's failure, said
// so; it was "the engine went away" through the real binary.
func TestOversizedArtifactsAreTheTasksFailure(t *testing.T) {
	task := fake.Task("sepbig", 64*model.MiB, "work")
	task.SeparateVerifier = &model.SeparateVerifier{Image: "verifier", Resources: task.Resources}
	b := &fake.Backend{CopyOutErr: fmt.Errorf("copying /logs/artifacts out of the container: more than 1 GiB: %w", runner.ErrTaskOversized), Script: script(nil)}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["sepbig@1x"]
	if r.Outcome != model.Failed || r.Cause == model.CauseEngineLost || !strings.HasPrefix(r.Reason, "artifacts over 1 GiB") {
		t.Errorf("%s/%s (%s), want the task's failure, artifacts over 1 GiB", r.Outcome, r.Cause, r.Reason)
	}
}

// A separate verifier's artifacts past MaxArtifactEntries (the agent
// made 44,852 empty files in /logs/artifacts, copied for 85 s) are the
// task's failure, the path and the bound named.
func TestTooManyArtifactEntriesAreTheTasksFailure(t *testing.T) {
	task := fake.Task("sepmany", 64*model.MiB, "work")
	task.SeparateVerifier = &model.SeparateVerifier{Image: "verifier", Resources: task.Resources}
	b := &fake.Backend{CopyOutErr: fmt.Errorf("copying /logs/artifacts out of the container: %w", runner.ErrTooManyEntries), Script: script(nil)}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["sepmany@1x"]
	want := fmt.Sprintf("artifacts hold more than %d entries in all (past it at /logs/artifacts): the verifier did not run", runner.MaxArtifactEntries)
	if r.Outcome != model.Failed || r.Cause != "" || !strings.HasPrefix(r.Reason, want) {
		t.Errorf("%s/%s (%s), want the task's failure: %q", r.Outcome, r.Cause, r.Reason, want)
	}
}

// A separate verifier's artifacts are copied under its clock: a copy out
// of the agent's container longer than the verifier's time limit is the
// verifier's timeout, the copy named (it was bounded by nothing).
func TestArtifactsCopyCountsInTheVerifiersTime(t *testing.T) {
	for _, c := range []struct {
		name      string
		out, in   time.Duration
		direction string
	}{
		{"out", time.Minute, 0, "out of the agent's container"},
		{"in", 0, time.Minute, "into the verifier's container"},
	} {
		t.Run(c.name, func(t *testing.T) {
			task := fake.Task("sepslow", 64*model.MiB, "work")
			task.SeparateVerifier = &model.SeparateVerifier{Image: "verifier", Resources: task.Resources}
			task.VerifierTimeout = 50 * time.Millisecond
			b := &fake.Backend{CopyOutTakes: c.out, CopyInTakes: c.in, Script: script(nil)}
			r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["sepslow@1x"]
			if r.Outcome != model.Timeout || r.Cause != model.CauseVerifierTimeout || !strings.Contains(r.Reason, "(50ms)") || !strings.Contains(r.Reason, "while the artifacts (/logs/artifacts) were being copied "+c.direction) {
				t.Errorf("%s/%s (%s), want the verifier's timeout (50ms), the copy %s named", r.Outcome, r.Cause, r.Reason, c.direction)
			}
		})
	}
}

// A step that exits 137 with no OOM kill by the kernel (a kill -9 from
// the host of its process: no engine event says it) is said so on the
// step and in the reason, not passed off as the task's plain failure or
// an OOM kill.
func TestAKill9WithNoOOMIsSaidSo(t *testing.T) {
	task := fake.Task("sigkill", 64*model.MiB, "work")
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{"sigkill/work": {ExitCode: 137}})}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["sigkill@1x"]
	const note = "exited 137, a SIGKILL's status, with no OOM kill by the kernel: killed by the task or from outside the container"
	if r.Outcome == model.OOMKilled || !strings.Contains(r.Reason, note) || len(r.Steps) == 0 || !strings.Contains(r.Steps[0].Output, note) {
		t.Errorf("%s (%s), steps %+v: want the kill -9 said on the step and in the reason", r.Outcome, r.Reason, r.Steps)
	}
}

// A pause is recorded once, however its figures move while it lasts: the
// available memory changes at every look (each half second), and a
// trial paused for a minute held a pause for each (the twenty-ninth
// attacker's 3: 28 after 15 s).
func TestHostPressureIsRecordedOncePerPause(t *testing.T) {
	cfg := config(t, []model.Task{fake.Task("t", 64*model.MiB, "s")})
	var mu sync.Mutex
	avail, looks := int64(100*model.MiB), 0
	cfg.FloorBytes = 512 * model.MiB
	cfg.Host = func() runner.HostLoad {
		mu.Lock()
		defer mu.Unlock()
		looks++
		if looks > 4 {
			avail = 8 << 30 // four looks under the floor, each a new figure
		} else {
			avail += model.MiB
		}
		return runner.HostLoad{AvailableBytes: avail, Load1: 1}
	}
	res := runSweep(t, &fake.Backend{Script: script(nil)}, cfg, context.Background(), nil).results["t@1x"]
	if res.Outcome != model.Passed || len(res.HostPauses) != 1 {
		t.Errorf("result %s pauses %q; want one pause", res.Outcome, res.HostPauses)
	}
}
