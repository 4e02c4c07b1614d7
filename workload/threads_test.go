package workload

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threadsBurst is how many goroutines the child blocks in read(2) at once
// under a full pids limit: each holds a thread, more than a fresh Go
// process has (about five), fewer than the probe's reserve.
const threadsBurst = 12

// The probe's threads are made at its start and kept: in a pids cgroup
// with no pid left (pids.max at its pids.current), the probe's runtime,
// with the reserve, still serves threadsBurst blocking calls at once —
// each needs a thread of its own — with no new thread. The same child
// without the reserve dies as the probe died in a pod's fork storm
// ("failed to create new OS thread"; with cgo, "pthread_create failed"):
// the control shows the test can fail.
// Needs root and a writable pids hierarchy (cgroup v1 here; v2 with the
// pids controller enabled for a child group).
func TestProbeThreadsSurviveAFullPidsLimit(t *testing.T) {
	if dir := os.Getenv("HR_THREADS_CGROUP"); dir != "" {
		os.Exit(threadsChild(dir, os.Getenv("HR_THREADS_RESERVE") == "1"))
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a pids cgroup of its own")
	}
	parent := pidsHierarchy()
	if parent == "" {
		t.Skip("no writable pids cgroup hierarchy (v1 /sys/fs/cgroup/pids, or v2 with +pids)")
	}
	run := func(reserve bool) (string, int) {
		dir := filepath.Join(parent, fmt.Sprintf("hr-threads-test-%d-%t", os.Getpid(), reserve))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("cannot make a pids cgroup: %v", err)
		}
		defer os.Remove(dir) // empty once the child has exited
		cmd := exec.Command(os.Args[0], "-test.run=^TestProbeThreadsSurviveAFullPidsLimit$", "-test.count=1")
		cmd.Env = append(os.Environ(), "HR_THREADS_CGROUP="+dir, "HR_THREADS_RESERVE="+map[bool]string{true: "1", false: "0"}[reserve])
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	out, code := run(true)
	if code != 0 || !strings.Contains(out, "served") {
		t.Errorf("with the reserve: exit %d, want 0:\n%s", code, tail(out, 1500))
	} else {
		t.Logf("with the reserve: %s", lastLine(out))
	}
	out, code = run(false)
	// The runtime's words without cgo (the probe is built so), and with.
	if code == 0 || !strings.Contains(out, "failed to create new OS thread") && !strings.Contains(out, "pthread_create failed") {
		t.Errorf("without the reserve (the control): exit %d, want the runtime's death for want of a thread:\n%s", code, tail(out, 1500))
	} else {
		t.Logf("without the reserve: exit %d, %s", code, firstLine(out))
	}
}

// threadsChild is the probe's runtime set up as the probe sets it (with
// or without the reserve), then moved into dir with no pid to spare, then
// made to hold threadsBurst threads at once in read(2).
func threadsChild(dir string, reserve bool) int {
	pinProcs(probeProcs)
	if reserve {
		reserveThreads(probeSpareThreads)
	}
	fail := func(f string, a ...any) int { fmt.Printf(f+"\n", a...); return 3 }
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fail("join %s: %v", dir, err)
	}
	cur, err := os.ReadFile(filepath.Join(dir, "pids.current"))
	if err != nil {
		return fail("%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), bytes.TrimSpace(cur), 0o644); err != nil {
		return fail("pids.max: %v", err)
	}
	threads := strings.TrimSpace(string(cur))
	if err := forkRefused(); err != nil {
		return fail("the pids limit is not full: %v", err)
	}
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil { // blocking, unlike os.Pipe
		return fail("pipe: %v", err)
	}
	done := make(chan error, threadsBurst)
	for range threadsBurst {
		go func() {
			var b [1]byte
			_, err := syscall.Read(fds[0], b[:])
			done <- err
		}()
	}
	// Every reader in its read(2) at once: each on a thread of its own.
	want := fmt.Sprintf("%d 0x%x ", syscall.SYS_READ, fds[0])
	deadline := time.Now().Add(20 * time.Second)
	for n := 0; n < threadsBurst; n = inSyscall(want) {
		if time.Now().After(deadline) {
			return fail("only %d of %d readers in read(2) after 20 s", n, threadsBurst)
		}
		time.Sleep(time.Millisecond) // polling /proc, bounded by the deadline
	}
	if _, err := syscall.Write(fds[1], make([]byte, threadsBurst)); err != nil {
		return fail("write: %v", err)
	}
	for range threadsBurst {
		if err := <-done; err != nil {
			return fail("read: %v", err)
		}
	}
	fmt.Printf("served %d blocking reads at once with %s tasks and no pid to spare\n", threadsBurst, threads)
	return 0
}

// forkRefused checks that the kernel refuses a new task here.
func forkRefused() error {
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	if err := cmd.Start(); err == nil {
		cmd.Wait()
		return fmt.Errorf("a child started")
	} else if !strings.Contains(err.Error(), "resource temporarily unavailable") {
		return err
	}
	return nil
}

// inSyscall counts this process's threads whose current system call
// starts with prefix (/proc/self/task/*/syscall: number, then arguments).
func inSyscall(prefix string) int {
	tasks, _ := os.ReadDir("/proc/self/task")
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "syscall"))
		if err == nil && strings.HasPrefix(string(b), prefix) {
			n++
		}
	}
	return n
}

// pidsHierarchy is a pids cgroup directory a child group can be made in
// ("" for none).
func pidsHierarchy() string {
	if _, err := os.Stat("/sys/fs/cgroup/pids/pids.current"); err == nil || fileExists("/sys/fs/cgroup/pids/cgroup.procs") {
		return "/sys/fs/cgroup/pids"
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(string(b), "pids") {
		return "/sys/fs/cgroup"
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func firstLine(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
