package docker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// loadComposeTask copies the compose task to a temporary directory, puts
// the sidecar's static binary in its build context, loads it as a task
// directory and builds its images: main from the Debian image, the
// sidecar FROM scratch.
func loadComposeTask(t *testing.T, agent string, edit func(dir string)) model.Task {
	t.Helper()
	needDebian(t)
	dir := filepath.Join(t.TempDir(), "compose-sidecar")
	if err := os.CopyFS(dir, os.DirFS("testdata/tb/compose-sidecar")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "environment", "echo", "echoserver"), "./testdata/echoserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the sidecar: %v\n%s", err, out)
	}
	if edit != nil {
		edit(dir)
	}
	l, err := taskfile.LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if task.Image, err = EnsureTaskImage(ctx, testCli, task, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	if err := EnsureSidecarImages(ctx, testCli, &task, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	a, ok := task.Agent(agent)
	if !ok {
		t.Fatalf("no agent %s", agent)
	}
	task.Agents = []model.Agent{a}
	return task
}

// nothingLeft fails if any container or network of the task remains.
func nothingLeft(t *testing.T, task string) {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", runner.LabelTask+"="+task))
	ctx := context.Background()
	cs, err := testCli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := testCli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := testCli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 0 || len(ns) != 0 || len(vs.Volumes) != 0 {
		t.Errorf("%d container(s), %d network(s), %d volume(s) left behind", len(cs), len(ns), len(vs.Volumes))
	}
}

// A task with a service beside it: main is built with the compose
// file's build args and target and runs its command in its working_dir
// with its environment; the sidecar starts first and is waited on until
// healthy, the verifier reaches it by its service name and reads the
// named volume it writes (mounted read-only in main),
// the ratio limits only the task's container, the sidecar's memory is
// recorded, and nothing is left behind.
func TestComposeSidecarReachedByName(t *testing.T) {
	needEngine(t)
	task := loadComposeTask(t, taskfile.AgentNop, nil)
	if len(task.Sidecars) != 1 || task.Sidecars[0].Name != "echo" {
		t.Fatalf("sidecars %+v", task.Sidecars)
	}
	var limits []string
	onEvent := func(e event.Event) {
		st, ok := e.(event.TrialStarted)
		if !ok {
			return
		}
		// While the trial runs: the task's container has the ratio's limit,
		// the sidecar none (the compose file gives it none).
		cs, err := testCli.ContainerList(context.Background(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", runner.LabelTrial+"="+st.Trial), filters.Arg("label", runner.LabelTask+"="+task.Name))})
		if err != nil {
			t.Error(err)
			return
		}
		for _, c := range cs {
			info, err := testCli.ContainerInspect(context.Background(), c.ID)
			if err != nil {
				t.Error(err)
				continue
			}
			limits = append(limits, c.Labels[LabelService]+"="+model.FormatBytes(info.HostConfig.Memory))
		}
	}
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 2}}, 1, context.Background(), onEvent)
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	r := results[0]
	for _, s := range r.Steps {
		t.Logf("%s %s: exit %d\n%s", s.Phase, s.Name, s.ExitCode, s.Output)
	}
	if r.Outcome != model.Passed || r.Reward == nil || *r.Reward != 1 {
		t.Errorf("%s reward %v (%s), want passed with reward 1", r.Outcome, r.Reward, r.Reason)
	}
	if len(r.Sidecars) != 1 || r.Sidecars[0].Name != "echo" || r.Sidecars[0].PeakBytes < 24*model.MiB || r.Sidecars[0].OOMKilled {
		t.Errorf("sidecar usage %+v, want echo's peak at least its 24 MiB", r.Sidecars)
	}
	want := map[string]bool{"=128MiB": true, "echo=1GiB": true}
	if len(limits) != 2 || !want[limits[0]] || !want[limits[1]] || limits[0] == limits[1] {
		t.Errorf("memory limits %v, want the task's container at 2x 64 MiB and the sidecar at its default bound, outside the ratio", limits)
	}
	nothingLeft(t, task.Name)
}

// Cancelling the sweep mid-trial removes the sidecar and the network too.
func TestComposeCancelLeavesNothing(t *testing.T) {
	needEngine(t)
	task := loadComposeTask(t, taskfile.AgentOracle, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, ctx, func(e event.Event) {
		if _, ok := e.(event.StepStarted); ok {
			cancel()
		}
	})
	if len(results) != 1 || results[0].Outcome != model.Cancelled {
		t.Fatalf("results %+v, want one cancelled", results)
	}
	nothingLeft(t, task.Name)
}

// Cancelling while the trial waits for its sidecar's health removes
// what was made so far.
func TestComposeCancelWhileWaitingForHealth(t *testing.T) {
	needEngine(t)
	task := loadComposeTask(t, taskfile.AgentNop, func(dir string) {
		p := filepath.Join(dir, "environment", "docker-compose.yaml")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `["CMD", "/echoserver", "probe"]`, `["CMD", "/echoserver", "nonsense"]`, 1)
		s = strings.Replace(s, "retries: 60", "retries: 100000", 1)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the sidecar runs (the trial is then waiting on its health).
	go func() {
		f := filters.NewArgs(filters.Arg("label", runner.LabelTask+"="+task.Name), filters.Arg("label", LabelService+"=echo"), filters.Arg("status", "running"))
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if cs, err := testCli.ContainerList(ctx, container.ListOptions{Filters: f}); err == nil && len(cs) > 0 {
				break
			}
			time.Sleep(100 * time.Millisecond) // polling the engine, not timing the test
		}
		cancel()
	}()
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, ctx, nil)
	if len(results) != 1 || results[0].Outcome != model.Cancelled || !strings.Contains(results[0].Reason, "starting") {
		t.Fatalf("results %+v, want one cancelled while starting", results)
	}
	nothingLeft(t, task.Name)
}

// A sidecar that never becomes healthy fails the trial's start, saying
// which and why, and leaves nothing.
func TestComposeUnhealthySidecar(t *testing.T) {
	needEngine(t)
	task := loadComposeTask(t, taskfile.AgentNop, func(dir string) {
		p := filepath.Join(dir, "environment", "docker-compose.yaml")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `["CMD", "/echoserver", "probe"]`, `["CMD", "/echoserver", "nonsense"]`, 1)
		s = strings.Replace(s, "retries: 60", "retries: 2", 1)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	if len(results) != 1 || results[0].Outcome != model.InfraError || !strings.Contains(results[0].Reason, "sidecar echo is unhealthy") {
		t.Fatalf("results %+v, want an infra error naming the unhealthy sidecar", results)
	}
	nothingLeft(t, task.Name)
}

// The reaper's part for compose environments: a network or volume whose
// headroom is gone is removed; one a live headroom owns is left.
func TestPlatformReapsTrialResourcesOfDeadOwners(t *testing.T) {
	needEngine(t)
	ctx := context.Background()
	mk := func(name, owner string) string {
		n, err := testCli.NetworkCreate(ctx, name, network.CreateOptions{Labels: map[string]string{
			runner.LabelHeadroom: "1", runner.LabelExperiment: testExperimentPrefix, runner.LabelTask: "test/reap-networks", runner.LabelOwner: owner}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = testCli.NetworkRemove(ctx, n.ID) })
		return n.ID
	}
	// This host, boot and pid namespace, a pid no process has.
	parts := strings.Split(runner.Owner(), ":")
	parts[1], parts[2] = "999999999", "1"
	gone := strings.Join(parts, ":")
	dead := mk("headroom-"+testExperimentPrefix+"-dead", gone)
	live := mk("headroom-"+testExperimentPrefix+"-live", runner.Owner())
	vol, err := testCli.VolumeCreate(ctx, volume.CreateOptions{Name: "headroom-" + testExperimentPrefix + "-dead-data", Labels: map[string]string{
		runner.LabelHeadroom: "1", runner.LabelExperiment: testExperimentPrefix, runner.LabelTask: "test/reap-networks", runner.LabelOwner: gone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testCli.VolumeRemove(ctx, vol.Name, true) })
	// What the reaper does (session.ReapLeftovers), through the port:
	// list, then remove what is neither kept nor a live owner's.
	plat, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer plat.Close()
	owned, err := plat.Owned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var removed []runner.OwnedResource
	for _, o := range owned {
		if o.Experiment != testExperimentPrefix || o.Kept || o.OwnerAlive {
			continue
		}
		if err := plat.Remove(ctx, o); err != nil {
			t.Fatal(err)
		}
		removed = append(removed, o)
	}
	for _, r := range removed {
		if r.ID != dead && r.Name != vol.Name {
			t.Errorf("removed %+v, which is not the dead owner's", r)
		}
	}
	// Another headroom on this host (a concurrent test run, a helper's
	// sweep) reaps the same dead owner's resources: one it took before our
	// list is gone, which is what the reaper is for. One still listed must
	// have been removed by this reap.
	for _, want := range []string{dead, vol.Name} {
		listed, gotIt := false, false
		for _, o := range owned {
			listed = listed || o.ID == want || o.Name == want
		}
		for _, r := range removed {
			gotIt = gotIt || r.ID == want || r.Name == want
		}
		if listed && !gotIt {
			t.Errorf("the dead owner's %s was listed but not removed (removed %+v)", want, removed)
		}
		if !listed {
			t.Logf("the dead owner's %s was reaped by another headroom on this host before the list", want)
		}
	}
	if _, err := testCli.NetworkInspect(ctx, dead, network.InspectOptions{}); err == nil {
		t.Error("the dead owner's network is still there")
	}
	if _, err := testCli.VolumeInspect(ctx, vol.Name); err == nil {
		t.Error("the dead owner's volume is still there")
	}
	if _, err := testCli.NetworkInspect(ctx, live, network.InspectOptions{}); err != nil {
		t.Errorf("the live owner's network is gone: %v", err)
	}
}

// A sidecar image that is neither on the engine nor pullable is named,
// with what to do.
func TestSidecarImageMissing(t *testing.T) {
	needEngine(t)
	task := model.Task{Name: "test/missing-sidecar", Sidecars: []model.Sidecar{{Name: "db", Image: "headroom-test-absent.invalid/db:never"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := EnsureSidecarImages(ctx, testCli, &task, nil)
	if err == nil || !strings.Contains(err.Error(), "sidecar db: image headroom-test-absent.invalid/db:never is not on this engine and could not be pulled") || !strings.Contains(err.Error(), "docker load") {
		t.Errorf("error %v, want the sidecar, its image and what to do", err)
	}
}
