package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

func TestParseProcStat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want procStat
		ok   bool
	}{
		{"42 (python3) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 20 18446744073709551615", procStat{"python3", 7, 123456, 20, 1, 42}, true},
		{"43 (a b) c)) R 1 43 43 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", procStat{"a b) c)", 1, 99, 0, 1, 43}, true},
		{"44 (short) S 1 2 3", procStat{}, false},
		{"46 (no rss) S 1 2 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 7 0", procStat{}, false},
		{"no parens", procStat{}, false},
		{"45 (x) S notanumber 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0", procStat{}, false},
	} {
		st, ok := parseProcStat([]byte(c.in))
		if ok != c.ok || (ok && st != c.want) {
			t.Errorf("%q: %+v %v", c.in, st, ok)
		}
	}
	// This process's own stat parses, with its real parent.
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc")
	}
	if st, ok := parseProcStat(data); !ok || st.ppid != os.Getppid() || st.rssPages <= 0 {
		t.Errorf("own stat: %+v ok %v, want ppid %d and a resident set", st, ok, os.Getppid())
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("42 (python3) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000"))
	f.Add([]byte("1 ()) S"))
	f.Fuzz(func(t *testing.T, b []byte) { parseProcStat(b) })
}

// A process's files are read through kept handles: the same process reads
// again (with its memory as it is now), a process that has gone reads as
// gone, and its handles are closed.
func TestReadProcKeepsFilesWhileTheProcessLives(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	pid := cmd.Process.Pid
	// Until the child has exec'd, its command line is the test's, or
	// empty mid-exec ("[sleep]" by its comm, in a CI run): wait for
	// sleep's own, with a deadline.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(b), "sleep\x00") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sleep did not exec within 10 s")
		}
		runtime.Gosched()
	}
	s := &sandbox{}
	s.pw.cmds = map[procID]procCmd{}
	for i := 0; i < 2; i++ {
		p, _, _, ok := s.readProc(pid, time.Now())
		// (A process that has only just exec'd may have no pages yet.)
		if !ok || p.PID != pid || p.PPID != os.Getpid() || !strings.HasPrefix(p.Command, "sleep") {
			t.Fatalf("read %d: %+v ok %v", i, p, ok)
		}
	}
	if p, _, _, ok := s.readProc(os.Getpid(), time.Now()); !ok || p.RSSBytes <= 0 {
		t.Errorf("own process: %+v ok %v, want its resident set", p, ok)
	}
	s.pw.files.Forget(fmt.Sprintf("/proc/%d/stat", os.Getpid()))
	if len(s.pw.files.Paths()) != 1 {
		t.Errorf("%d files kept, want its stat", len(s.pw.files.Paths()))
	}
	cmd.Process.Kill()
	cmd.Wait() // reaped: its /proc directory is gone
	if p, _, _, ok := s.readProc(pid, time.Now()); ok {
		t.Errorf("a reaped process still reads: %+v", p)
	}
	if len(s.pw.files.Paths()) != 0 {
		t.Errorf("%d files still kept for a process that has gone", len(s.pw.files.Paths()))
	}
}

// A process's start is read as its own moment on the wall clock, to a
// clock tick: /proc/stat's btime (whole seconds) put every start up to a
// second early (0.92 s on the CI machine), and a child the agent's
// script forked read as born in the step before it (CI:
// TestInstalledAgentChildKillIsNamed).
func TestProcessStartIsItsOwnMoment(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	before := time.Now()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	after := time.Now()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	s := &sandbox{}
	s.pw.cmds = map[procID]procCmd{}
	p, _, _, ok := s.readProc(cmd.Process.Pid, time.Now())
	if !ok {
		t.Fatal("the child could not be read")
	}
	// Its start is counted in clock ticks (10 ms): within two of the fork.
	if tick := 20 * time.Millisecond; p.Started.Before(before.Add(-tick)) || p.Started.After(after.Add(tick)) {
		t.Errorf("started %s, want between %s and %s (off by %s)", p.Started.Format("15:04:05.000"), before.Format("15:04:05.000"), after.Format("15:04:05.000"), before.Sub(p.Started))
	}
}

// The process list is read only when it may have changed: with a pids
// controller, while its task count matches the known processes' threads
// the list is not re-read; a new count, or a process gone, reads it.
// Without one, the list is read at 5 Hz and the processes at 10 Hz.
func TestProcessListIsReadWhenItMayHaveChanged(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	sleeper := func() int {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Skip("no sleep:", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	a, b := sleeper(), sleeper()
	for _, withCount := range []bool{true, false} {
		t.Run(fmt.Sprintf("count=%v", withCount), func(t *testing.T) {
			root := t.TempDir()
			mem := filepath.Join(root, "memory", "docker", "c1")
			pids := filepath.Join(root, "pids", "docker", "c1")
			for _, d := range []string{mem, pids} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write := func(dir, name, text string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(mem, "memory.usage_in_bytes", "0\n")
			write(mem, "cgroup.procs", fmt.Sprintf("%d\n", a))
			if withCount {
				write(pids, "pids.current", "1\n")
			}
			cg, err := cgroup.Find(root, "c1", 0)
			if err != nil {
				t.Fatal(err)
			}
			s := &sandbox{cg: cg}
			s.pw.cmds, s.pw.ticks, s.pw.pidsFile = map[procID]procCmd{}, map[int]int64{}, cg.PidsFile()
			if (s.pw.pidsFile != "") != withCount {
				t.Fatalf("pids file %q", s.pw.pidsFile)
			}
			t0 := time.Now()
			read := func(at time.Duration) []int {
				ps, ok := s.readProcs(t0.Add(at))
				if !ok {
					t.Fatalf("at %v: cgroup gone", at)
				}
				var out []int
				for _, p := range ps.Procs {
					out = append(out, p.PID)
				}
				slices.Sort(out)
				return out
			}
			both := []int{min(a, b), max(a, b)}
			if got := read(0); !slices.Equal(got, []int{a}) {
				t.Fatalf("first read %v, want [%d]", got, a)
			}
			// b joins the list; the count does not say so yet.
			write(mem, "cgroup.procs", fmt.Sprintf("%d\n%d\n", a, b))
			if got := read(procEvery); !slices.Equal(got, []int{a}) {
				t.Errorf("list re-read at once: %v, want [%d]", got, a)
			}
			if withCount {
				if got := read(2 * procEvery); !slices.Equal(got, []int{a}) {
					t.Errorf("list re-read with the count unchanged: %v", got)
				}
				write(pids, "pids.current", "2\n")
				if got := read(3 * procEvery); !slices.Equal(got, both) {
					t.Errorf("after the count changed: %v, want %v", got, both)
				}
				if got := read(3*procEvery + listCheckEvery); !slices.Equal(got, both) {
					t.Errorf("a second later: %v, want %v", got, both)
				}
			} else if got := read(listEvery); !slices.Equal(got, both) {
				t.Errorf("at 5 Hz: %v, want %v", got, both)
			}
		})
	}
}

// A task's process whose command line is 14 arguments of 131,000 bytes
// (200 of them held headroom at 639 MB) is read in part: at most
// maxCmdline bytes, marked, and no more allocated than a little past
// that.
func TestReadCmdlineReadsAtMostWhatIsKept(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc")
	}
	long := strings.Repeat("A", 131000)
	args := []string{"-c", "sleep 60", "x"}
	for range 14 {
		args = append(args, long)
	}
	cmd := exec.Command("/bin/sh", args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	dir := fmt.Sprintf("/proc/%d", cmd.Process.Pid)
	// Wait for the exec: until then the line is the test's own.
	deadline := time.Now().Add(10 * time.Second)
	var line string
	for {
		raw, _, _ := readAtMost(dir+"/cmdline", 16)
		if strings.HasPrefix(string(raw), "/bin/sh\x00-c") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's command line is %q after 10 s", raw)
		}
		runtime.Gosched()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	line, read := readCmdline(dir, "sh")
	runtime.ReadMemStats(&after)
	if !read || !strings.HasPrefix(line, "/bin/sh -c sleep 60 x AAAA") || !strings.HasSuffix(line, cmdlineMark) {
		t.Fatalf("readCmdline = %.60q…, %v; want the line's start, marked as cut", line, read)
	}
	if n := len(line); n > maxCmdline+len(cmdlineMark) {
		t.Errorf("readCmdline kept %d bytes, want at most %d", n, maxCmdline+len(cmdlineMark))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("reading a 1.8 MB command line allocated %d bytes, want under 64 KiB", got)
	}
	argv := strings.Join(append([]string{"/bin/sh"}, args...), " ")
	if !sameArgv(line, argv) || sameArgv(line, argv[:maxCmdline]) || sameArgv(line, "/bin/sh -c other") {
		t.Errorf("sameArgv: a line read in part is its argv's start (and only of an argv longer than what was read)")
	}
	short, _ := readCmdline("/proc/self", "x")
	if strings.HasSuffix(short, cmdlineMark) || !sameArgv(short, short) {
		t.Errorf("the test's own command line %q is marked cut, or not itself", short)
	}
}

// Where /proc cannot be read the engine's top is asked, and its ps
// writes each command line whole (procps: up to 128 KiB a process, all
// in one answer at every tick): ps is told to cut its lines (--cols),
// and what comes is kept to maxCmdline bytes, marked as cut.
func TestReadTopCutsCommandLines(t *testing.T) {
	needEngine(t)
	ctx := context.Background()
	c, err := testCli.ContainerCreate(ctx, &container.Config{Image: DebianImage, Entrypoint: []string{"sh", "-c", "sleep 60", "x", strings.Repeat("A", 100000)},
		Labels: map[string]string{runner.LabelHeadroom: "1", runner.LabelExperiment: testExperimentPrefix}},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Skipf("the Debian image: %v", err)
	}
	t.Cleanup(func() { testCli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })
	if err := testCli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &sandbox{b: &Backend{cli: testCli}, id: c.ID}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ps, ok := s.readTop(time.Now())
		for _, p := range ps.Procs {
			if strings.HasPrefix(p.Command, "sh -c sleep 60 x AAAA") {
				if !strings.HasSuffix(p.Command, cmdlineMark) || len(p.Command) > maxCmdline+len(cmdlineMark) {
					t.Errorf("top's command line of %d bytes (…%q), want at most %d, marked as cut", len(p.Command), p.Command[len(p.Command)-8:], maxCmdline)
				}
				if s.b.noTopCols.Load() {
					t.Errorf("the engine's top refused --cols")
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no `sh -c sleep 60 …` in top within 20 s (ok %v): %+v", ok, ps.Procs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A process with 65,536 supplementary groups has a /proc/<pid>/status of
// 380 KB, its Groups line before NSpid: nsPID finds NSpid reading 4 KiB
// at a time.
func TestNSPIDReadsStatusAPieceAtATime(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("setting 65,536 groups needs root")
	}
	groups := make([]uint32, 65536)
	for i := range groups {
		groups[i] = uint32(i + 1)
	}
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: groups}}
	if err := cmd.Start(); err != nil {
		t.Skipf("a process with 65,536 groups: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	dir := fmt.Sprintf("/proc/%d", cmd.Process.Pid)
	f, err := os.Open(dir + "/status")
	if err != nil {
		t.Fatal(err)
	}
	size, _ := io.Copy(io.Discard, f)
	f.Close()
	if size < 300_000 {
		t.Fatalf("the process's status is %d bytes, want its 65,536 groups' 380 KB", size)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := nsPID(dir)
	runtime.ReadMemStats(&after)
	if n != cmd.Process.Pid {
		t.Errorf("nsPID = %d, want %d (this test runs in the host's pid namespace)", n, cmd.Process.Pid)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("nsPID allocated %d bytes for a status of groups, want under 64 KiB", got)
	}
	if n := nsPID("/proc/self"); n != os.Getpid() {
		t.Errorf("nsPID(/proc/self) = %d, want %d", n, os.Getpid())
	}
}

// A hog the container's first process forks only once the agent's step
// has begun (as an image's entrypoint does on a loaded host) is the
// environment's, not the step's, where steps are the engine's execs: it
// is in the entrypoint's session, and no exec is. Told by start time
// alone, its kill was charged to the step (the CI rehearsal of
// 2026-12-07, make hostile's entrypoint row, on a loaded host).
func TestAnEntrypointForkAfterTheFirstStepIsTheEnvironments(t *testing.T) {
	needDebian(t)
	idle := "while [ ! -e /tmp/go ]; do sleep 0.05; done; python3 -c 'import time\nheld = []\nwhile True:\n    held.append(bytearray(8 << 20)); time.sleep(0.05)' & exec sleep infinity"
	task := model.Task{Name: "test/entry-fork", Image: DebianImage, IdleCommand: []string{"sh", "-c", idle}, Network: "none",
		Resources: model.Resources{CPUs: 1, MemoryBytes: 96 * model.MiB}, AgentTimeout: time.Minute, VerifierTimeout: time.Minute,
		Verifier: model.Step{Name: "verify", Argv: []string{"bash", "-c", "true"}},
		Agents:   []model.Agent{{Name: "waiter", Steps: []model.Step{{Name: "wait", Argv: []string{"bash", "-c", "touch /tmp/go; sleep 20"}}}}}}
	task.SetProfile(model.ProfileHarbor)
	plan, err := model.NewPlan(model.PlanSpec{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}}, Repeats: 1, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(t, Options{ExecSteps: true})
	res, named := runOneTrial(t, b, plan, task)
	t.Logf("%s/%s: %s; kills %q", res.Outcome, res.Cause, res.Reason, named)
	if res.StepRunner != runner.StepsByExec {
		t.Fatalf("steps ran by %q, want the engine's exec", res.StepRunner)
	}
	i := slices.IndexFunc(res.OOMs, func(o model.OOMEvent) bool { return strings.HasPrefix(o.Command, "python3") })
	if i < 0 {
		t.Fatalf("no kill of the entrypoint's hog: %+v", res.OOMs)
	}
	if k := res.OOMs[i]; !k.Entrypoint {
		t.Errorf("the hog the entrypoint forked after the step began: kill %+v, want the entrypoint's", k)
	}
	for _, a := range res.Activities {
		if strings.HasPrefix(a.Command, "python3") && a.Step != "" {
			t.Errorf("the hog's activity is charged to step %q, want none", a.Step)
		}
	}
}
