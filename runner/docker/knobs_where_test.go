package docker

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/headroom-eval/headroom/model"
)

// workdirImage is the test image with an image WORKDIR of its own
// (/testbed, as SWE-style images have it), removed after the test.
func workdirImage(t *testing.T, workdir string) string {
	t.Helper()
	tag := fmt.Sprintf("headroom-test-workdir:%s", testExperimentPrefix)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := model.Build{Context: t.TempDir(), Inline: fmt.Sprintf("FROM %s\nWORKDIR %s\n", testImage, workdir)}
	if err := buildContext(ctx, testCli, tag, b, func(string) {}); err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	t.Cleanup(func() {
		imageWorkDirs.Delete(tag)
		_, _ = testCli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true})
	})
	return tag
}

func TestDiskPaths(t *testing.T) {
	harbor := []string{"/logs/verifier", "/logs/agent", "/logs/artifacts"}
	for _, c := range []struct {
		workdir, image, imageWD string
		want                    []string
		mounts                  []string
		skipped                 int
	}{
		{"", "swe:1", "/testbed", []string{"/testbed"}, nil, 0},
		{"/app", "swe:1", "/testbed", []string{"/app", "/testbed"}, nil, 0},
		{"/testbed/src", "swe:1", "/testbed", []string{"/testbed"}, nil, 0},
		{"/testbed", "swe:1", "/testbed/", []string{"/testbed"}, nil, 0},
		{"", "tb:1", "", []string{"/app"}, nil, 0},
		{"", "tb:1", "/", []string{"/app"}, nil, 0},
		{"", "", "", []string{"/work"}, nil, 0},
		{"", WorkloadRepo + ":abc", "", []string{"/work"}, nil, 0},
		// A working directory on the harness's mounts or the kernel's
		// gets no volume (the twenty-third attacker's 6).
		{"", "tb:1", "/logs/verifier", []string{"/app"}, harbor, 1},
		{"", "tb:1", "/logs/verifier/sub", []string{"/app"}, harbor, 1},
		{"", "tb:1", "/proc", []string{"/app"}, harbor, 1},
		{"/work", "tb:1", "/sys/fs", []string{"/work"}, nil, 1},
		{"", "tb:1", "/logs", []string{"/logs"}, harbor, 0},
	} {
		got, skipped := diskPaths(model.Task{WorkDir: c.workdir, Image: c.image, HarnessMounts: c.mounts}, c.imageWD)
		if strings.Join(got, " ") != strings.Join(c.want, " ") || len(skipped) != c.skipped {
			t.Errorf("workdir %q, image WORKDIR %q: %v (skipped %q), want %v and %d skipped", c.workdir, c.imageWD, got, skipped, c.want, c.skipped)
		}
	}
}

// The disk knob acts where the task works: an image whose WORKDIR is
// /testbed (the task file names none) has its direct writes there capped
// at the rate set, the record names /testbed, and the trial's reproduce
// line, run as printed, caps them the same.
func TestDiskKnobActsInTheImageWorkdir(t *testing.T) {
	b := knobBackend(t)
	if b.opts.Disk.Device == "" {
		t.Fatalf("no disk to throttle on this engine: %s", b.opts.Disk.Why)
	}
	task := probeTask(t, "testbed", "directio", "--ops", "24", "--kb", "256", "/testbed/build")
	task.Sidecars, task.Network = nil, "none"
	task.Image = workdirImage(t, "/testbed")
	task.User = "0:0" // WORKDIR made /testbed root's
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{column(t, "1x disk-bps=2MiB"), {K: 1}}, 1, context.Background(), nil)
	got := byColumn(results)
	capped := got["1x disk-bps=2MiB"]
	rate := measured(t, capped, "write_rate")
	free := measured(t, got["1x"], "write_rate")
	t.Logf("direct writes in /testbed: %s/s unlimited, %s/s at 2MiB/s; applied %v", model.FormatBytes(int64(free)), model.FormatBytes(int64(rate)), capped.Knobs.Applied)
	if !within(rate, 2<<20, 0.10) {
		t.Errorf("direct writes in the image's WORKDIR at disk-bps 2MiB came at %s/s, want 2MiB/s ±10%%", model.FormatBytes(int64(rate)))
	}
	if free < 2*(2<<20) {
		t.Errorf("unlimited direct writes at %s/s: too slow to tell the knob from the disk", model.FormatBytes(int64(free)))
	}
	applied := strings.Join(capped.Knobs.Applied, " ")
	if !b.opts.Disk.RootThrottled && (!strings.Contains(applied, "/testbed") || !strings.Contains(applied, "not throttled")) {
		t.Errorf("applied %q: want the throttled /testbed named, and what is not throttled", applied)
	}

	// The reproduce line, run as printed (with --rm, a name of this test
	// and the probe as its command), caps the same writes.
	line := Reproduce(task, task.Image, capped.Policy)
	if !strings.Contains(line, "--device-write-bps=") || (!b.opts.Disk.RootThrottled && !strings.Contains(line, "dst=/testbed")) {
		t.Fatalf("reproduce line %q: want the device throttle and the volume at /testbed", line)
	}
	name := testExperimentPrefix + "-reproduce-disk"
	run := strings.Replace(line, "docker run ", "docker run --rm --name "+name+" --entrypoint /hr-workload ", 1) + " directio --ops 24 --kb 256 /testbed/build"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", run).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", run, err, out)
	}
	m := regexp.MustCompile(`write_rate ([0-9.]+) B/s`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("%s printed no write_rate: %s", run, out)
	}
	repro, _ := strconv.ParseFloat(m[1], 64)
	t.Logf("the reproduce line %q wrote at %s/s", line, model.FormatBytes(int64(repro)))
	if !within(repro, 2<<20, 0.10) {
		t.Errorf("the reproduce line's direct writes in /testbed came at %s/s, want 2MiB/s ±10%%", model.FormatBytes(int64(repro)))
	}
}

// linkRTTs are the round trips the network helper measured, by when
// (the interface's name dropped: the engine names a reconnected one
// afresh).
func linkRTTs(r model.TrialResult) map[string]float64 {
	out := map[string]float64{}
	if r.Knobs != nil {
		for _, m := range r.Knobs.Measured {
			if m.Name == "link_rtt" {
				when, _, _ := strings.Cut(m.Step, " (")
				out[when] = m.Value
			}
		}
	}
	return out
}

// A network change between phases does not escape the latency knob: a
// task whose agent phase has no network and whose verifier's has it
// again (Harbor's per-phase network_mode) gets a new interface for the
// verifier, which is shaped too: the verifier's own round trip to the
// server beside it is the latency, and the record says what the helper
// measured after each change (nothing to shape while the agent had no
// network).
func TestLatencyKnobFollowsPhaseNetworks(t *testing.T) {
	b := knobBackend(t)
	task := parseTask(t, `
[task]
name = "test/phase-net"
[environment]
image = "builtin"
cpus = 1
memory = "128M"
network = "bridge"
[agent]
network_mode = "no-network"
[verifier]
command = ["/hr-workload", "rtt", "--n", "15", "peer:7007"]
[[services]]
name = "peer"
image = "builtin"
[[agents]]
name = "offline"
  [[agents.steps]]
  name = "work"
  workload = { duration_ms = 0 }
`)
	if task.AgentNetwork == nil || task.AgentNetwork.Mode != model.NetworkNone {
		t.Fatalf("agent network %+v: want no-network", task.AgentNetwork)
	}
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{column(t, "1x latency=100ms"), {K: 1}}, 1, context.Background(), nil)
	got := byColumn(results)
	shaped, plain := got["1x latency=100ms"], got["1x"]
	rtt, base := measured(t, shaped, "rtt"), measured(t, plain, "rtt")
	t.Logf("the verifier's rtt: %.2f ms unshaped, %.2f ms at latency 100ms; record %+v", base, rtt, shaped.Knobs)
	if !within(rtt-base, 100, 0.10) {
		t.Errorf("the verifier's round trip after the network came back is %.1f ms (%.1f over unshaped), want 100 ±10%%", rtt, rtt-base)
	}
	links := linkRTTs(shaped)
	start, back := links["at the start"], links["after the change to public"]
	if !within(start, 100, 0.15) || !within(back, 100, 0.15) {
		t.Errorf("the helper measured %v, want about 100 ms at the start and after the change to public", links)
	}
	if s := strings.Join(shaped.Knobs.Skipped, " "); !strings.Contains(s, "after the change to no-network: nothing to shape") {
		t.Errorf("skipped %q: want the no-network phase recorded as nothing to shape", s)
	}
	if shaped.Outcome != model.Passed {
		t.Errorf("%s: %s", shaped.Outcome, shaped.Reason)
	}
}

// The other way round: a task with no network of its own whose agent
// phase asks for one (Harbor's [agent] network_mode = "public") is not
// "nothing to shape": the interface the phase adds is shaped, and the
// round trip the helper measured through it is recorded.
func TestLatencyKnobShapesANetworkAPhaseAdds(t *testing.T) {
	b := knobBackend(t)
	task := parseTask(t, `
[task]
name = "test/phase-online"
[environment]
image = "builtin"
cpus = 1
memory = "64M"
network = "none"
[agent]
network_mode = "public"
[verifier]
workload = { duration_ms = 0 }
[[agents]]
name = "online"
  [[agents.steps]]
  name = "work"
  workload = { duration_ms = 0 }
`)
	if task.Network != "none" || task.AgentNetwork == nil || task.AgentNetwork.Mode != model.NetworkPublic {
		t.Fatalf("network %q, agent %+v: want none, then public for the agent", task.Network, task.AgentNetwork)
	}
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{column(t, "1x latency=100ms")}, 1, context.Background(), nil)
	r := results[0]
	links := linkRTTs(r)
	t.Logf("record %+v", r.Knobs)
	if rtt, ok := links["after the change to public"]; !ok || !within(rtt, 100, 0.15) {
		t.Errorf("the helper measured %v, want about 100 ms through the agent phase's interface", links)
	}
	for _, s := range r.Knobs.Skipped {
		if strings.Contains(s, "the task runs with no network") {
			t.Errorf("skipped %q for a task whose agent phase has a network", s)
		}
	}
	if r.Outcome != model.Passed {
		t.Errorf("%s: %s", r.Outcome, r.Reason)
	}
}

// Jitter, measured inside the container: the median round trip is the
// latency and the spread covers latency ± jitter (the delay line's own
// test, TestJitterCurveIsCentredAndKeepsOrder, holds it under load).
func TestJitterKnobCentredInContainer(t *testing.T) {
	b := knobBackend(t)
	task := parseTask(t, `
[task]
name = "test/jitter"
[environment]
image = "builtin"
cpus = 1
memory = "128M"
[verifier]
workload = { duration_ms = 0 }
[[services]]
name = "peer"
image = "builtin"
[[agents]]
name = "probe"
  [[agents.steps]]
  name = "probe"
  command = ["/hr-workload", "rtt", "--n", "120", "--spread", "peer:7007"]
`)
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{column(t, "1x latency=100ms jitter=50ms")}, 1, context.Background(), nil)
	r := results[0]
	med, p10, p90 := measured(t, r, "rtt"), measured(t, r, "rtt_p10"), measured(t, r, "rtt_p90")
	t.Logf("rtt at latency 100ms ± 50ms: p10 %.1f, median %.1f, p90 %.1f ms; applied %v", p10, med, p90, r.Knobs.Applied)
	// The round trips follow each other, so a short delay is sampled
	// more often than a long one (the next trip starts sooner): the
	// samples' median is not the curve's (the latency) but lies down to
	// the geometric mean of its ends, sqrt(50 × 150) = 86.6 ms, for a
	// curve spending its time evenly across them. CI's 84.9 ms failed the
	// latency's ±15%; runs here give 85-105 ms.
	if low := math.Sqrt(50 * 150); med < low*0.85 || med > 100*1.15 {
		t.Errorf("median rtt %.1f ms, want between %.1f ms (the time-weighted median's floor, -15%%) and the latency 100 ms +15%%", med, low*0.85)
	}
	if p10 < 45 || p10 > 90 || p90 < 110 || p90 > 160 {
		t.Errorf("rtt p10 %.1f, p90 %.1f ms: want them spread within 100 ± 50 ms", p10, p90)
	}
}

// Disk neighbours' I/O is recorded: what each wrote and synced, and
// their write rate in all beside their cores.
func TestDiskNeighboursWritesRecorded(t *testing.T) {
	b := knobBackend(t)
	task := parseTask(t, `
[task]
name = "test/beside-disk"
[environment]
image = "builtin"
cpus = 1
memory = "64M"
[verifier]
workload = { duration_ms = 0 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "wait"
  workload = { duration_ms = 3000 }
`)
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{column(t, "uncapped neighbours=2:disk@50%")}, 1, context.Background(), nil)
	r := results[0]
	if r.Knobs == nil || len(r.Knobs.Neighbours) != 2 {
		t.Fatalf("%s %s: knobs %+v", r.Outcome, r.Reason, r.Knobs)
	}
	for _, n := range r.Knobs.Neighbours {
		t.Logf("%s: %.2f cores, wrote %s in %s", n.Name, n.Cores(), model.FormatBytes(n.WrittenBytes), time.Duration(n.Wall))
		if n.WrittenBytes < 1<<20 {
			t.Errorf("%s wrote %d bytes over %s: its writes were not recorded", n.Name, n.WrittenBytes, time.Duration(n.Wall))
		}
	}
	if rate := measured(t, r, "neighbour_write_rate"); rate <= 0 {
		t.Errorf("neighbour_write_rate %.0f", rate)
	}
}

// Jitter does not cut what the delay line carries: holding frames back
// for the one ahead (a per-frame draw with order kept) cut every upload
// at ±50 ms to about 40% (138 to 58 Mbit/s, 68.1 to 25.2). One upload
// under the curve varies with its phase: 148 Mbit/s beside 21.6 and 18.9
// in one CI run (96.9 without jitter), 70–93 in another, as TCP's slow
// start ends early when the delay rises under it (cubic's HyStart reads a
// rising delay as a queue; a real path with this jitter does the same).
// So the best of six uploads must reach 60% of the median without
// jitter: the old line reached it in none, this one in most (a run of
// six all in the low mode, each about 0.4 likely, is under 1 in 100).
func TestJitterKeepsUploadRate(t *testing.T) {
	b := knobBackend(t)
	task := probeTask(t, "upload", "upload", "--bytes", "8000000", "http://peer:8080/sink")
	cols := []model.Ratio{column(t, "1x latency=50ms"), column(t, "1x latency=50ms jitter=50ms")}
	const runs = 6
	results, _ := sweepAtOnce(t, b, []model.Task{task}, cols, runs, 1, context.Background(), nil)
	rates := map[string][]float64{}
	for _, r := range results {
		rates[r.Ratio.String()] = append(rates[r.Ratio.String()], measured(t, r, "upload_rate"))
	}
	sorted := func(col string) []float64 {
		v := append([]float64(nil), rates[col]...)
		if len(v) != runs {
			t.Fatalf("%s: %d uploads, want %d", col, len(v), runs)
		}
		sort.Float64s(v)
		return v
	}
	steady, jittered := sorted("1x latency=50ms"), sorted("1x latency=50ms jitter=50ms")
	median, best := (steady[runs/2-1]+steady[runs/2])/2, jittered[runs-1]
	t.Logf("upload at latency 50ms: %v (median %s/s); ± 50ms: %v (best %s/s)", steady, model.FormatBits(int64(median)), jittered, model.FormatBits(int64(best)))
	if best < 0.6*median {
		t.Errorf("upload at ± 50ms jitter came at best %s/s in %d runs, under 60%% of the %s/s without it: the delay line holds frames back", model.FormatBits(int64(best)), runs, model.FormatBits(int64(median)))
	}
}

// The bandwidth knob follows a network change too: the verifier's
// download through the interface its phase got back comes at the cap.
func TestBandwidthKnobFollowsPhaseNetworks(t *testing.T) {
	b := knobBackend(t)
	task := parseTask(t, `
[task]
name = "test/phase-bw"
[environment]
image = "builtin"
cpus = 1
memory = "128M"
network = "bridge"
[agent]
network_mode = "no-network"
[verifier]
command = ["/hr-workload", "fetch", "http://peer:8080/blob?bytes=3000000"]
[[services]]
name = "peer"
image = "builtin"
[[agents]]
name = "offline"
  [[agents.steps]]
  name = "work"
  workload = { duration_ms = 0 }
`)
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{column(t, "1x bandwidth=8mbit")}, 1, context.Background(), nil)
	r := results[0]
	rate := measured(t, r, "transfer_rate")
	t.Logf("the verifier's download at 8mbit after the network came back: %s/s; applied %v", model.FormatBits(int64(rate)), r.Knobs.Applied)
	if !within(rate, 8e6, 0.10) {
		t.Errorf("the verifier's download came at %s/s, want 8mbit ±10%%", model.FormatBits(int64(rate)))
	}
	if a := strings.Join(r.Knobs.Applied, " "); !strings.Contains(a, "after the change to public") || !strings.Contains(a, "ingress redirected to hringress1 (tbf 8000000bit)") {
		t.Errorf("applied %q: want the cap re-applied after the change, as the kernel holds it", a)
	}
}
