package docker

import (
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/kmsg"
)

// signals takes what the sandbox has sent the runner so far.
func signals(s *sandbox) []runner.OOMSignal {
	var out []runner.OOMSignal
	for {
		select {
		case o := <-s.ooms:
			out = append(out, o)
		default:
			return out
		}
	}
}

// The kernel's words go to their own kills, in order, when a counter read
// several kills before the log's first report was read: each had gone to
// the count's last kill, which named the step driver's kill after the
// task's bash and left the driver's without the kernel's figures (the
// shm row, 1 run in 6 with both cores busy). A word past the count is a
// kill of its own.
func TestKernelWordsGoToTheirKills(t *testing.T) {
	s := &sandbox{ooms: make(chan runner.OOMSignal, 16), driverPID: 40}
	at := time.Now()
	s.signal(at, "cgroup", func() { s.cgroupKills = 3 })
	for _, k := range []kmsg.Kill{{Process: "bash", PID: 41}, {Process: "head", PID: 42}, {Process: "hr-workload", PID: 40}, {Process: "exe", PID: 43}} {
		s.kernelOOM(at, k)
	}
	got := signals(s)
	want := []struct {
		count   int
		process string
		driver  bool
	}{{3, "", false}, {1, "bash", false}, {2, "head", false}, {3, "hr-workload", true}, {4, "exe", false}}
	if len(got) != len(want) {
		t.Fatalf("%d signals, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if g := got[i]; g.Count != w.count || g.Process != w.process || g.Driver != w.driver {
			t.Errorf("signal %d: kill %d %q driver %v; want kill %d %q driver %v", i, g.Count, g.Process, g.Driver, w.count, w.process, w.driver)
		}
	}
}

// The sandbox's end waits for the kernel's words on the kills it counted
// (their reader can trail the container's removal on a loaded host), and
// no longer than its bound where the kernel logged none.
func TestTheEndAwaitsTheKernelsWords(t *testing.T) {
	s := &sandbox{ooms: make(chan runner.OOMSignal, 16), b: &Backend{kernelLog: true}}
	s.signal(time.Now(), "events", func() { s.eventKills = 2 })
	s.kernelOOM(time.Now(), kmsg.Kill{Process: "bash", PID: 7})
	if s.awaitKernelWords(50 * time.Millisecond) {
		t.Fatal("it ended with one of the two kills undescribed")
	}
	go s.kernelOOM(time.Now(), kmsg.Kill{Process: "python3", PID: 8})
	if !s.awaitKernelWords(time.Minute) {
		t.Fatal("it gave up before the second kill's word")
	}
}

// A sample carries the cgroup's tmpfs pages (v1's total_shmem, v2's
// shmem): what stands in for the kernel's report of a kill it did not log.
func TestSampleCarriesTheTmpfsPages(t *testing.T) {
	for _, c := range []struct {
		version int
		files   map[string]string
	}{
		{1, map[string]string{"memory.usage_in_bytes": "67108864\n", "memory.stat": "cache 62914560\nshmem 62914560\ntotal_inactive_file 0\ntotal_shmem 62914560\n"}},
		{2, map[string]string{"memory.current": "67108864\n", "memory.stat": "anon 4194304\nfile 62914560\nshmem 62914560\ninactive_file 0\n"}},
	} {
		sb := fakeCgroupSandbox(t, c.version, c.files)
		if !sb.sampleOnce(time.Now()) {
			t.Fatalf("v%d: the fake cgroup is gone", c.version)
		}
		if s := <-sb.samples; s.ShmemBytes != 60<<20 || s.WorkingSetBytes != 64<<20 {
			t.Errorf("v%d: tmpfs %d of a working set of %d; want %d of %d", c.version, s.ShmemBytes, s.WorkingSetBytes, 60<<20, 64<<20)
		}
	}
}
