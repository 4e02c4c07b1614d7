package cli_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/store"
)

func TestKnobFlagsAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--latency", "fast"}, "--latency:"},
		{[]string{"--time-limits", "0.5x,0.5x"}, "listed twice"},
		{[]string{"--bandwidth", "10"}, "needs a unit"},
		{[]string{"--neighbours", "2", "--neighbour-load", "gpu"}, "--neighbour-load"},
		{[]string{"--neighbours", "2", "--neighbour-intensity", "0%"}, "--neighbour-intensity"},
		// ParseCount allowed 2^40: this one ran 142 s creating containers.
		{[]string{"--neighbours", "0,1000000000000"}, "--neighbours: neighbours 1000000000000 is more than 64"},
	} {
		r := headroom(t, append([]string{"run", "--tasks", "swe-edit", "--ratios", "1"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q; want usage error naming %q", c.args, r.code, r.stderr, c.want)
		}
	}
	r := headroom(t, "run", "--resume", "20260101-000000-abcd", "--latency", "0,200ms")
	if r.code != 2 || !strings.Contains(r.stderr, "--latency cannot change it") {
		t.Errorf("resume with a knob flag: exit %d %q", r.code, r.stderr)
	}
}

// A sweep of the knobs is one experiment: its manifest records the axes
// and the columns, and every trial its column and how the knob acted.
func TestKnobSweepRecordsColumnsAndEffects(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	r := headroom(t, "run", "--tasks", "timeout-bound", "--ratios", "uncapped", "--time-limits", "0.5x,1x", "--repeats", "1", "--out", root, "--format", "table")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"── time limit", "uncapped time=0.5x", "0/1 T", "Measured effect of the knobs", "agent_time"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	dir := onlyExperiment(t, root)
	m, err := store.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Knobs) != 1 || m.Knobs[0].Name != "time-limits" || len(m.Ratios) != 2 || m.Ratios[0].String() != "uncapped time=0.5x" {
		t.Fatalf("manifest knobs %+v ratios %v", m.Knobs, m.Ratios)
	}
	if rep := m.Tasks[0].Reproduce["uncapped time=0.5x"]; !strings.Contains(rep, "time limits at 0.5x the task's own") {
		t.Errorf("reproduce line %q does not say the time limits", rep)
	}
	trials, _, err := store.ReadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if tr.Ratio.Knobs.Time.K == 0.5 && (tr.Knobs == nil || len(tr.Knobs.Applied) == 0 || !strings.Contains(tr.Knobs.Applied[0], "agent 8s → 4s")) {
			t.Errorf("%s: knob record %+v", tr.Ratio, tr.Knobs)
		}
	}
}

// SIGKILL of headroom while a trial runs among its knobs' own containers
// (the network helper, two neighbours, the disk knob's volume): they are
// left, and the next start's reaper removes every one of them.
func TestSIGKILLLeavesKnobsForTheReaper(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	cmd := exec.Command(binary, "run", "--tasks", "model-round-trips", "--ratios", "uncapped", "--latency", "300ms", "--neighbours", "2", "--disk-iops", "500", "--repeats", "1", "--out", root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var id string
	deadline := time.Now().Add(3 * time.Minute)
	for id == "" || containersOf(t, id, "running") < 5 { // trial, model, helper, 2 neighbours
		if entries, _ := os.ReadDir(root); len(entries) == 1 {
			id = entries[0].Name()
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the trial and its knobs' containers did not all start (%d running)", containersOf(t, id))
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	helpers := helpersOf(t, id)
	vols := resourcesOf(t, cli, id)
	t.Logf("left by the SIGKILL: %d containers (%d helpers and neighbours), volumes and networks %v", containersOf(t, id), helpers, vols)
	if helpers != 3 || len(vols) < 2 {
		t.Fatalf("want the helper, 2 neighbours, the volume and the network left by the kill; got %d helpers, %v", helpers, vols)
	}
	// The next start over the same root reaps them (its own sweep has no
	// knobs to leave).
	r := headroom(t, "run", "--tasks", "swe-edit", "--ratios", "uncapped", "--repeats", "1", "--out", root)
	if r.code != 0 || !strings.Contains(r.stderr, "removed leftover") {
		t.Fatalf("next run: exit %d\n%s", r.code, r.stderr)
	}
	noContainersLeft(t, id)
	if left := resourcesOf(t, cli, id); len(left) != 0 {
		t.Errorf("left after the reaper: %v", left)
	}
}

func helpersOf(t *testing.T, experiment string) int {
	t.Helper()
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	f := filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+experiment), filters.Arg("label", docker.LabelHelper))
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// resourcesOf names an experiment's volumes and networks.
func resourcesOf(t *testing.T, cli interface {
	VolumeList(context.Context, volume.ListOptions) (volume.ListResponse, error)
	NetworkList(context.Context, network.ListOptions) ([]network.Summary, error)
}, experiment string) []string {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+experiment))
	var out []string
	vols, err := cli.VolumeList(context.Background(), volume.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vols.Volumes {
		out = append(out, "volume "+v.Name)
	}
	nets, err := cli.NetworkList(context.Background(), network.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nets {
		out = append(out, "network "+n.Name)
	}
	return out
}

// A --time-limits scale that makes a task's time limit shorter than any
// step takes to start is refused, as --timeout-scale refuses it: 0.05x of
// a 0.1 s limit ran, and its timed-out steps' CPU read 42.75 cores on a
// 2-CPU host (the twenty-seventh attacker's 2).
func TestTimeLimitsKnobKeepsTheShortestLimit(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"tk.toml": "[task]\nname = \"cli/tk\"\n[environment]\nimage = \"builtin\"\nmemory = \"64M\"\n[agent]\ntimeout_sec = 0.1\n[verifier]\nworkload = { duration_ms = 10, base_mb = 1 }\n[[agents]]\nname = \"a\"\n[[agents.steps]]\nname = \"s\"\nworkload = { duration_ms = 10, base_mb = 1 }\n"})
	out := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", dir, "--ratios", "uncapped", "--repeats", "1", "--time-limits", "0.05x,1x", "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, "--time-limits 0.05x makes task cli/tk's agent time limit 5ms, shorter than any step takes to start") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("an experiment was started: %v", entries)
	}
}
