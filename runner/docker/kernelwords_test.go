package docker

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/kmsg"
	"github.com/headroom-eval/headroom/workload"
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

// An exec's process whose output is /dev/null without the kept pipe is
// not the wrapper waiting after its script (traceHold): a shell's output
// is /dev/null for a moment while it runs a builtin with >/dev/null, and
// one read so was sent SIGUSR1 and died of it, exit 138 (CI rehearsals:
// graded-exit, then traced-statuses-sh). Once its output is /dev/null
// with the pipe kept on runner.HoldFD, as traceHold leaves it, it is
// released.
func TestExecHoldReleasesOnlyTheWaitingWrapper(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { _, _ = io.Copy(io.Discard, r) }()
	nulled, ended := filepath.Join(dir, "nulled"), filepath.Join(dir, "ended")
	cmd := exec.Command("bash", "-c", `trap "exit 7" USR1; exec 5>&1 >/dev/null; : > "$1"; while [ ! -e "$2" ]; do sleep 0.02; done; exec `+
		strconv.Itoa(runner.HoldFD)+`>&5 5>&-; while :; do sleep 0.02; done`, "bash", nulled, ended)
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(nulled); err == nil {
			break
		}
	}
	h := &execHold{on: true}
	for range workload.ReleaseReadings + 2 {
		h.step(&sandbox{}, cmd.Process.Pid)
	}
	if h.sent || h.ended {
		t.Fatalf("a process whose output is /dev/null for a moment was taken for the waiting wrapper (sent %v)", h.sent)
	}
	if err := os.WriteFile(ended, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !h.sent && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		h.step(&sandbox{}, cmd.Process.Pid)
	}
	if !h.sent {
		t.Fatal("the wrapper waiting with its output on /dev/null and its pipe kept was not released")
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 7 {
		t.Errorf("released wrapper: %v, exit %d; want its trap's 7", err, cmd.ProcessState.ExitCode())
	}
}

// A script that ended before headroom first read its wrapper left the
// pipe never seen, and a job it left holding the output was let go of at
// once (TestHostileR17OracleHeldToItsTimeoutLeavesTheJob failed once
// under load). The wrapper keeps the output on runner.HoldFD as it waits,
// so the pipe is named however late the first look: held while the job
// holds it, released once the job is gone.
func TestExecHoldNamesThePipeAfterTheScriptsEnd(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { _, _ = io.Copy(io.Discard, r) }()
	jobFile := filepath.Join(t.TempDir(), "job")
	// The script: a job left in the background with the output, then its
	// end, as traceHold ends it (the test's shell stands in for bash).
	wrapper := `(exec 0<&-; while :; do sleep 0.05; done) & echo $! > "$1"; s=0; trap "exit 7" USR1; exec ` +
		strconv.Itoa(runner.HoldFD) + `>&1 >/dev/null 2>&1 </dev/null; while :; do sleep 0.02; done`
	cmd := exec.Command("bash", "-c", wrapper, "bash", jobFile)
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer cmd.Process.Kill()
	var job int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		out, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", cmd.Process.Pid))
		b, _ := os.ReadFile(jobFile)
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && out == "/dev/null" {
			job = n
			break
		}
	}
	if job == 0 {
		t.Fatal("the wrapper did not reach its wait")
	}
	defer syscall.Kill(job, syscall.SIGKILL)
	sb := fakeCgroupSandbox(t, 2, map[string]string{"memory.current": "4096\n", "cgroup.procs": fmt.Sprintf("%d\n%d\n", cmd.Process.Pid, job)})
	h := &execHold{on: true}
	for range workload.ReleaseReadings + 2 {
		h.step(sb, cmd.Process.Pid)
	}
	if h.sent || !h.held {
		t.Fatalf("first read after the script's end: released %v, held %v (pipe %q); want held while the job holds the output", h.sent, h.held, h.pipe)
	}
	if err := syscall.Kill(job, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !h.sent && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		h.step(sb, cmd.Process.Pid)
	}
	if !h.sent {
		t.Fatal("the wrapper was not released once the job was gone")
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 7 {
		t.Errorf("released wrapper: %v, exit %d; want its trap's 7", err, cmd.ProcessState.ExitCode())
	}
}

// A sample carries the threads' CPU wait where it was read with it (about
// once a second), so the runner divides the wait between the host and the
// trial interval by interval (runner's waitSplit).
func TestSampleCarriesTheCPUWait(t *testing.T) {
	sb := fakeCgroupSandbox(t, 2, map[string]string{"memory.current": "4096\n", "cpu.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=5000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"})
	if !sb.sampleOnce(time.Now()) {
		t.Fatal("the fake cgroup is gone")
	}
	if s := <-sb.samples; !s.CPUWaitRead || s.CPUWaitNanos != 5_000_000 {
		t.Errorf("wait read %v, %d ns; want read, 5ms", s.CPUWaitRead, s.CPUWaitNanos)
	}
	if !sb.sampleOnce(time.Now()) {
		t.Fatal("the fake cgroup is gone")
	}
	if s := <-sb.samples; s.CPUWaitRead {
		t.Error("the wait was read again within the second")
	}
}
