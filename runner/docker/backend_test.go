package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// bothStepRunners runs a test with the built-in image's step driver and
// with the engine's exec per step: the two must record the same facts.
func bothStepRunners(t *testing.T, test func(t *testing.T, b *Backend, want string)) {
	for _, want := range []string{runner.StepsByDriver, runner.StepsByExec} {
		t.Run(want, func(t *testing.T) {
			test(t, newBackend(t, Options{ExecSteps: want == runner.StepsByExec}), want)
		})
	}
}

func TestOOMKillAtHardLimitNamesTheStep(t *testing.T) {
	needEngine(t)
	bothStepRunners(t, testOOMKillAtHardLimitNamesTheStep)
}

func testOOMKillAtHardLimitNamesTheStep(t *testing.T, b *Backend, runs string) {
	task := parseTask(t, enginetest.HeavyInstall)
	var oomEvents []event.OOMKill
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}, model.Uncapped}, 1, context.Background(), func(e event.Event) {
		if o, ok := e.(event.OOMKill); ok {
			oomEvents = append(oomEvents, o)
		}
	})
	byRatio := map[model.Ratio]model.TrialResult{}
	for _, r := range results {
		byRatio[r.Ratio] = r
	}
	tight := byRatio[model.Ratio{K: 1}]
	if tight.StepRunner != runs {
		t.Errorf("steps ran by %q, want %q", tight.StepRunner, runs)
	}
	if tight.Outcome != model.OOMKilled {
		t.Fatalf("1x: outcome %s (%s), want oom-killed", tight.Outcome, tight.Reason)
	}
	if tight.KilledInStep != "install" {
		t.Errorf("1x: killed in step %q, want install", tight.KilledInStep)
	}
	if len(tight.Steps) < 2 || tight.Steps[1].ExitCode != 137 || tight.Steps[1].OOMKills == 0 {
		t.Errorf("1x: install step = %+v, want exit 137 with an OOM kill", tight.Steps)
	}
	if len(oomEvents) == 0 || oomEvents[0].TrialID() != tight.ID {
		t.Fatalf("no OOMKill event for the 1x trial: %+v", oomEvents)
	}
	if b.ReadsKernelLog() {
		o := tight.OOMs[0]
		if o.Process != "hr-workload" || o.PID == 0 || o.RSSBytes < 40*model.MiB {
			t.Errorf("the kernel's log was readable but the kill does not say what died: %+v", o)
		}
	} else {
		t.Log("the kernel's log is not readable here: kills carry no process name")
	}
	// The container's limit: the driver's own memory is beside the
	// ratio's (model.DriverMemoryBytes), and its peak counts in it.
	limit := 64 * model.MiB
	if runs == runner.StepsByDriver {
		limit += model.DriverMemoryBytes
	}
	if tight.PeakWorkingSetBytes > int64(limit) || tight.PeakWorkingSetBytes < 40*model.MiB {
		t.Errorf("1x: peak working set %s, want close to the container's %s limit", model.FormatBytes(tight.PeakWorkingSetBytes), model.FormatBytes(int64(limit)))
	}
	free := byRatio[model.Uncapped]
	if free.Outcome != model.Passed {
		t.Fatalf("uncapped: outcome %s (%s), want passed", free.Outcome, free.Reason)
	}
	if free.Steps[1].PeakWorkingSetBytes < 100*model.MiB {
		t.Errorf("uncapped: install peak %s, want ≥ 100MiB", model.FormatBytes(free.Steps[1].PeakWorkingSetBytes))
	}
	if free.SampleRateHz < 10 {
		t.Errorf("uncapped: sampled at %.1f Hz, want about 20", free.SampleRateHz)
	}
}

func TestChildKillWithPassingVerifierIsPassedAfterOOM(t *testing.T) {
	needEngine(t)
	bothStepRunners(t, testChildKillWithPassingVerifierIsPassedAfterOOM)
}

func testChildKillWithPassingVerifierIsPassedAfterOOM(t *testing.T, b *Backend, runs string) {
	task := parseTask(t, enginetest.ChildKill)
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	r := results[0]
	if r.StepRunner != runs {
		t.Errorf("steps ran by %q, want %q", r.StepRunner, runs)
	}
	if r.Outcome != model.PassedAfterOOM {
		t.Fatalf("outcome %s (%s), want passed-after-oom; steps %+v", r.Outcome, r.Reason, r.Steps)
	}
	if !r.StateOOMKilled {
		t.Errorf("State.OOMKilled false, want true (a child was killed)")
	}
	if r.KilledInStep != "build" {
		t.Errorf("killed in %q, want build", r.KilledInStep)
	}
}

func TestPolicyReadBackFromInspect(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{})
	task := parseTask(t, enginetest.HeavyInstall)
	task.Resources.CPUs = 0.5
	for _, ratio := range model.StandardRatios {
		tr := model.Trial{ID: "inspect-" + ratio.String(), Task: task.Name, Agent: "heavy", Ratio: ratio, Policy: model.NewPolicy(task.Resources, ratio, 2)}
		sb, err := b.Start(context.Background(), runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
		if err != nil {
			t.Fatal(err)
		}
		info, err := testCli.ContainerInspect(context.Background(), sb.ID())
		if _, rmErr := sb.Remove(context.Background()); rmErr != nil {
			t.Error(rmErr)
		}
		if err != nil {
			t.Fatal(err)
		}
		hc, p := info.HostConfig, tr.Policy
		// The steps run through the driver: its own memory is beside the
		// ratio's limit (model.DriverMemoryBytes).
		wantMem := p.HardLimitBytes
		if wantMem > 0 {
			wantMem += model.DriverMemoryBytes
		}
		if hc.Memory != wantMem || hc.MemoryReservation != p.GuaranteeBytes {
			t.Errorf("%s: memory %d reservation %d, want %d %d", ratio, hc.Memory, hc.MemoryReservation, wantMem, p.GuaranteeBytes)
		}
		wantSwap := wantMem
		if hc.MemorySwap != wantSwap {
			t.Errorf("%s: memory-swap %d, want %d", ratio, hc.MemorySwap, wantSwap)
		}
		if hc.NanoCPUs != nanoCPUs(p) || hc.CPUShares != cpuShares(p) {
			t.Errorf("%s: nanocpus %d shares %d, want %d %d", ratio, hc.NanoCPUs, hc.CPUShares, nanoCPUs(p), cpuShares(p))
		}
		if hc.PidsLimit == nil || *hc.PidsLimit != p.PidsLimit {
			t.Errorf("%s: pids limit %v, want %d", ratio, hc.PidsLimit, p.PidsLimit)
		}
		if info.Config.Labels[runner.LabelHeadroom] == "" || info.Config.Labels[runner.LabelTrial] != tr.ID || info.Config.Labels[runner.LabelExperiment] != testExperimentPrefix {
			t.Errorf("%s: labels %v", ratio, info.Config.Labels)
		}
		if ratio == (model.Ratio{K: 5}) && !p.CPULimitCapped {
			t.Errorf("5x of 0.5 CPU on 2 CPUs should be capped")
		}
	}
}

func TestShortSpikeAppearsInPeak(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{})
	// One 200 ms spike of 80 MiB on a 10 MiB base.
	task := parseTask(t, `
[task]
name = "test/spike"
[environment]
image = "builtin"
memory = "256M"
[verifier]
workload = { duration_ms = 50 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "spike"
  workload = { duration_ms = 1000, base_mb = 10, spike_mb = 80, spike_len_ms = 200, spike_every_ms = 300, spike_chance = 1 }
`)
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	r := results[0]
	if r.Outcome != model.Passed {
		t.Fatalf("outcome %s (%s)", r.Outcome, r.Reason)
	}
	st := r.Steps[0]
	if st.PeakWorkingSetBytes < 88*model.MiB {
		t.Errorf("sampled peak %s misses the 80MiB spike on a 10MiB base", model.FormatBytes(st.PeakWorkingSetBytes))
	}
	if st.KernelPeakBytes < st.PeakWorkingSetBytes {
		t.Errorf("kernel peak %s below sampled peak %s", model.FormatBytes(st.KernelPeakBytes), model.FormatBytes(st.PeakWorkingSetBytes))
	}
}

func TestCancelRemovesEveryContainer(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{})
	task := parseTask(t, `
[task]
name = "test/long"
[environment]
image = "builtin"
memory = "32M"
[verifier]
workload = { duration_ms = 50 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "long"
  workload = { duration_ms = 60000, base_mb = 4 }
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	results, evs := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}, {K: 2}}, 2, ctx, func(e event.Event) {
		if _, ok := e.(event.StepStarted); ok {
			started++
			if started == 2 {
				cancel()
			}
		}
	})
	if len(results) != 4 {
		t.Fatalf("%d results, want 4", len(results))
	}
	for _, r := range results {
		if r.Outcome != model.Cancelled {
			t.Errorf("%s: %s, want cancelled", r.ID, r.Outcome)
		}
	}
	if end, ok := evs[len(evs)-1].(event.SweepEnded); !ok || !end.Interrupted {
		t.Errorf("last event %T, want SweepEnded{Interrupted}", evs[len(evs)-1])
	}
	left, err := testCli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runner.LabelTask+"=test/long"))})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%d container(s) left after cancel", len(left))
	}
	_ = time.Second
}

// Where the cgroup files cannot be read (a remote engine), memory comes
// from the engine's stats stream, and the record says so.
func TestStatsStreamFallback(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{ForceStats: true})
	task := parseTask(t, enginetest.HeavyInstall)
	task.Agents[0].Steps[1].Argv = task.Agents[0].Steps[0].Argv // keep it small: no kill
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{model.Uncapped}, 1, context.Background(), nil)
	r := results[0]
	if r.SampleSource != "docker-stats" || r.Outcome == model.InfraError {
		t.Fatalf("source %q outcome %s (%s)", r.SampleSource, r.Outcome, r.Reason)
	}
	if r.Samples == 0 || r.PeakWorkingSetBytes == 0 {
		t.Errorf("%d samples, peak %d: the stats stream gave nothing", r.Samples, r.PeakWorkingSetBytes)
	}
}

func TestKeepLeavesTheContainerLabelled(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{Keep: true})
	task := parseTask(t, enginetest.HeavyInstall)
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{model.Uncapped}, 1, context.Background(), nil)
	id := results[0].ContainerID
	info, err := testCli.ContainerInspect(context.Background(), id)
	if err != nil {
		t.Fatalf("kept container is gone: %v", err)
	}
	testCli.ContainerRemove(context.Background(), id, container.RemoveOptions{Force: true})
	if info.Config.Labels[runner.LabelKept] != "1" || info.State.Running {
		t.Errorf("labels %v running %v: want kept and stopped", info.Config.Labels, info.State.Running)
	}
}

func TestContainersRunLockedDown(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{})
	task := parseTask(t, enginetest.HeavyInstall)
	tr := model.Trial{ID: "locked", Task: task.Name, Ratio: model.Ratio{K: 1}, Policy: model.NewPolicy(task.Resources, model.Ratio{K: 1}, 2)}
	sb, err := b.Start(context.Background(), runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	info, err := testCli.ContainerInspect(context.Background(), sb.ID())
	sb.Remove(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hc := info.HostConfig
	if len(hc.SecurityOpt) != 1 || hc.SecurityOpt[0] != "no-new-privileges" {
		t.Errorf("security opts %v", hc.SecurityOpt)
	}
	if len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" || len(hc.CapAdd) != 0 {
		t.Errorf("caps drop %v add %v: the built-in workload needs none", hc.CapDrop, hc.CapAdd)
	}
	if len(hc.Mounts) != 0 || len(hc.Binds) != 0 || len(info.Mounts) != 0 {
		t.Errorf("mounts %v binds %v", info.Mounts, hc.Binds)
	}
	if string(hc.NetworkMode) != "none" || info.Config.User != "65534:65534" || hc.Privileged {
		t.Errorf("network %s user %q privileged %v", hc.NetworkMode, info.Config.User, hc.Privileged)
	}
}

// A trial with a network is on a bridge of its own, never the engine's
// default one (where it reached other containers' servers: round three
// of #40): labelled as its container is, with the owner, and removed with
// the trial.
func TestTrialBridgeIsItsOwn(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{Owner: "test-owner"})
	task := parseTask(t, enginetest.HeavyInstall)
	task.Network = "bridge"
	tr := model.Trial{ID: "ownbridge", Task: task.Name, Ratio: model.Ratio{K: 1}, Policy: model.NewPolicy(task.Resources, model.Ratio{K: 1}, 2)}
	ctx := context.Background()
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	info, err := testCli.ContainerInspect(ctx, sb.ID())
	if err != nil {
		sb.Remove(ctx)
		t.Fatal(err)
	}
	var nets []string
	for name := range info.NetworkSettings.Networks {
		nets = append(nets, name)
	}
	var netID string
	if len(nets) != 1 || nets[0] == "bridge" || string(info.HostConfig.NetworkMode) == "bridge" {
		t.Errorf("networks %v (mode %s): want one of the trial's own, not the engine's bridge", nets, info.HostConfig.NetworkMode)
	} else {
		n, err := testCli.NetworkInspect(ctx, nets[0], network.InspectOptions{})
		netID = n.ID
		if err != nil || n.Driver != "bridge" || n.Internal || n.Labels[runner.LabelTrial] != tr.ID || n.Labels[runner.LabelOwner] != "test-owner" || n.Labels[runner.LabelHeadroom] != "1" {
			t.Errorf("network %s: driver %s internal %v labels %v (%v)", nets[0], n.Driver, n.Internal, n.Labels, err)
		}
	}
	if _, err := sb.Remove(ctx); err != nil {
		t.Errorf("remove: %v", err)
	}
	if netID != "" {
		if _, err := testCli.NetworkInspect(ctx, netID, network.InspectOptions{}); err == nil {
			t.Errorf("the trial's network %s outlived it", nets[0])
			testCli.NetworkRemove(ctx, netID)
		}
	}
}

// A PID 1 that ends with `exit 137` by itself ended by itself: main took
// every exit above 128 for a kill from outside (the engine gone). A kill
// by someone is its engine event's (Final.KilledBy, TestFaults).
func TestExit137ByItselfIsItsOwn(t *testing.T) {
	needDebian(t)
	b := newBackend(t, Options{ExecSteps: true})
	task := model.Task{Name: "test/exit137", Image: DebianImage, IdleCommand: []string{"sh", "-c", "sleep 1; exit 137"}, Network: "none",
		Resources: model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}}
	task.SetProfile(model.ProfileHarbor)
	tr := model.Trial{ID: "exit137", Task: task.Name, Ratio: model.Uncapped, Policy: model.NewPolicy(task.Resources, model.Uncapped, 2)}
	ctx := context.Background()
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove(ctx)
	waitCh, errCh := testCli.ContainerWait(ctx, sb.ID(), container.WaitConditionNotRunning)
	select {
	case w := <-waitCh:
		if w.StatusCode != 137 {
			t.Fatalf("exit %d, want 137", w.StatusCode)
		}
	case err := <-errCh:
		t.Fatal(err)
	case <-time.After(time.Minute):
		t.Fatal("the container still runs after a minute")
	}
	got := sb.(runner.ExitWitness).ExitedItself(ctx)
	if !strings.Contains(got, "exit 137") {
		t.Errorf("ExitedItself = %q; want its own exit 137", got)
	}
}
