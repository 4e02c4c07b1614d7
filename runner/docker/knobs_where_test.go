package docker

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
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
	for _, c := range []struct {
		workdir, image, imageWD string
		want                    []string
	}{
		{"", "swe:1", "/testbed", []string{"/testbed"}},
		{"/app", "swe:1", "/testbed", []string{"/app", "/testbed"}},
		{"/testbed/src", "swe:1", "/testbed", []string{"/testbed"}},
		{"/testbed", "swe:1", "/testbed/", []string{"/testbed"}},
		{"", "tb:1", "", []string{"/app"}},
		{"", "tb:1", "/", []string{"/app"}},
		{"", "", "", []string{"/work"}},
		{"", WorkloadRepo + ":abc", "", []string{"/work"}},
	} {
		got := diskPaths(model.Task{WorkDir: c.workdir, Image: c.image}, c.imageWD)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("workdir %q, image WORKDIR %q: %v, want %v", c.workdir, c.imageWD, got, c.want)
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
