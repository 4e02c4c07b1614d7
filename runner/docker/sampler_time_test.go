package docker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/event"
)

// A sample is of the instant its trial's files were read, not of its
// round's start: at 32 trials one round reads for tens of milliseconds
// on a loaded host, and a sample stamped before its read put the kernel's
// mark in the interval before (TestPeakCaptureAtScale counted 2-7% of the
// spikes missed that every sample's mark had carried).
func TestSampleIsStampedWhenRead(t *testing.T) {
	sb := fakeCgroupSandbox(t, 1, map[string]string{"memory.usage_in_bytes": "4096\n"})
	roundStart := time.Now().Add(-50 * time.Millisecond) // the round began before the trials read ahead of this one
	before := time.Now()
	if !sb.sampleOnce(roundStart) {
		t.Fatal("the fake cgroup is gone")
	}
	s := <-sb.samples
	if s.Time.Before(before) {
		t.Errorf("the sample is stamped %v before its read began (the round's start), want the read's instant", before.Sub(s.Time))
	}
	if s.UsageBytes != 4096 {
		t.Errorf("usage %d, want 4096", s.UsageBytes)
	}
}

// fakeCgroupSandbox is a sandbox sampling container c1's cgroup, made of
// files under a temporary root (cgroup v1's memory/docker/c1, or v2's
// docker/c1 under a unified root), with room for one sample.
func fakeCgroupSandbox(t *testing.T, version int, files map[string]string) *sandbox {
	t.Helper()
	root := t.TempDir()
	mem := filepath.Join(root, "memory", "docker", "c1")
	if version == 2 {
		mem = filepath.Join(root, "docker", "c1")
		files["../../cgroup.controllers"] = "memory\n"
	}
	for name, body := range files {
		p := filepath.Join(mem, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cg, err := cgroup.Find(root, "c1", 0)
	if err != nil {
		t.Fatalf("v%d: %v", version, err)
	}
	return &sandbox{cg: cg, samples: make(chan event.Sample, 1)}
}
