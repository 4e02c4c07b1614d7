package docker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
)

// The end marker may follow a last line the step left open; the line is
// kept, and the step ends only when both streams have their marker.
func TestDriverSplitsTheEndMarkerOffBothStreams(t *testing.T) {
	d := &driver{}
	var got []string
	c := &driven{end: "\x1e[headroom-end 01]", done: make(chan struct{}), line: func(stream, text string) { got = append(got, stream+":"+text) }}
	d.cur = c
	out, errs := d.lineFrom("stdout"), d.lineFrom("stderr")
	out("first")
	out("open\x1e[headroom-end 01] 3")
	select {
	case <-c.done:
		t.Fatal("done after one stream's marker: stderr may still have lines")
	default:
	}
	errs("late")
	errs("\x1e[headroom-end 01] 3")
	<-c.done
	if want := []string{"stdout:first", "stdout:open", "stderr:late"}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if c.code != 3 {
		t.Errorf("exit code %d, want 3", c.code)
	}
	d.cur = nil
	out("stray") // nothing running: dropped, not a panic
}

// When the container dies under a step, the step ends as an exec'd one
// would (killed, 137) and a later step is an error, not a hang.
func TestDriverEndsWithItsContainer(t *testing.T) {
	_, sb := startDriven(t, "driver-dies", model.Uncapped)
	long, err := wire.Profile{Style: "pip", Packages: []string{"pandas"}, DurationMS: 60000, BaseMB: 2}.Argv("long")
	if err != nil {
		t.Fatal(err)
	}
	printing := make(chan struct{})
	var once bool
	res, err := sb.Exec(context.Background(), long, nil, "", func(stream, text string) {
		if !once {
			once = true
			close(printing)
			go sb.Kill(context.Background())
		}
	})
	if err != nil || res.ExitCode != 137 {
		t.Fatalf("step under a killed container: exit %d, %v; want 137, nil", res.ExitCode, err)
	}
	<-printing
	if _, err := sb.Exec(context.Background(), long, nil, "", func(string, string) {}); !errors.Is(err, errDriverGone) {
		t.Errorf("a step after the container died: %v, want %v", err, errDriverGone)
	}
}

// startDriven starts the heavy-install task's container at ratio, its
// steps through the driver, its samples drained; removed when t ends.
func startDriven(t *testing.T, id string, ratio model.Ratio) (*Backend, runner.Sandbox) {
	t.Helper()
	needEngine(t)
	b := newBackend(t, Options{})
	task := parseTask(t, enginetest.HeavyInstall)
	tr := model.Trial{ID: id, Task: task.Name, Ratio: ratio, Policy: model.NewPolicy(task.Resources, ratio, 2)}
	sb, err := b.Start(context.Background(), runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Remove(context.Background()) })
	if sb.StepRunner() != runner.StepsByDriver {
		t.Fatalf("step runner %q, want %q", sb.StepRunner(), runner.StepsByDriver)
	}
	go func() {
		for range sb.Samples() {
		}
	}()
	return b, sb
}

// fakeDriver answers each command on conn with answer (what it writes on
// stdout before the end marker) and the marker on both streams.
func fakeDriver(t *testing.T, conn net.Conn, answer func(c workload.Command, stdout io.Writer)) {
	t.Helper()
	go func() {
		sc := bufio.NewScanner(conn)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		out, errs := stdcopy.NewStdWriter(conn, stdcopy.Stdout), stdcopy.NewStdWriter(conn, stdcopy.Stderr)
		for sc.Scan() {
			var c workload.Command
			if json.Unmarshal(sc.Bytes(), &c) != nil {
				return
			}
			answer(c, out)
			io.WriteString(errs, c.End+" 0\n")
		}
	}()
}

// A read answered with more than the driver ever sends (1 MiB and a byte,
// base64'd) is the task's failure, named, and is not kept; an answer that
// is not base64 is the task's too, never the engine's.
func TestDriverReadAnswerIsBoundedAndParsed(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		want string
	}{
		"3 MiB":      {strings.Repeat("QUFB", 3<<20/4), "larger than"},
		"not base64": {"this is not base64!", "not base64"},
	} {
		t.Run(name, func(t *testing.T) {
			host, ctr := net.Pipe()
			defer host.Close()
			fakeDriver(t, ctr, func(c workload.Command, out io.Writer) {
				io.WriteString(out, tc.body+"\n"+c.End+" 0\n")
			})
			s := &sandbox{drv: newDriver(types.HijackedResponse{Conn: host, Reader: bufio.NewReader(host)})}
			data, done, err := s.readByDriver(context.Background(), "/logs/verifier/reward.txt")
			if !done || !errors.Is(err, runner.ErrTaskInterfered) || !strings.Contains(err.Error(), tc.want) || data != nil {
				t.Errorf("read = %d bytes, done %v, %v; want the task's failure saying %q", len(data), done, err, tc.want)
			}
		})
	}
}

// Both streams' end markers carry the code; one that does not parse, or
// two that disagree, are not the driver's answer.
func TestDriverEndMarkersMustAgree(t *testing.T) {
	for _, codes := range [][2]string{{"0", "1"}, {"zero", "zero"}, {"0", "-3"}} {
		d := &driver{}
		c := &driven{end: "\x1e[headroom-end 02]", started: "\x1e[headroom-pid 02]", done: make(chan struct{}), line: func(string, string) {}}
		d.cur = c
		d.lineFrom("stderr")("\x1e[headroom-pid 02] 42")
		if d.runningPID() != 42 {
			t.Errorf("the step's pid %d, want 42", d.runningPID())
		}
		d.lineFrom("stdout")("\x1e[headroom-end 02] " + codes[0])
		d.lineFrom("stderr")("\x1e[headroom-end 02] " + codes[1])
		<-c.done
		if c.bad == "" {
			t.Errorf("codes %q on stdout and stderr were taken as an answer (%d)", codes, c.code)
		}
	}
}

// A step whose last line is left open at about 1 MiB (the driver writes
// its end marker on that line) ends with its own exit code, not as a
// timeout: the marker was cut at the line's 1 MiB piece (a review of the
// hostile rows), and the step waited for it until its deadline.
func TestDriverEndMarkerAfterAnOpenMiB(t *testing.T) {
	for _, open := range []int{1<<20 - 20, 1<<20 - 1, 2<<20 - 30} {
		host, ctr := net.Pipe()
		fakeDriver(t, ctr, func(c workload.Command, out io.Writer) {
			// The output, then the marker in two frames (the engine's
			// stream may part it anywhere), the first taking the open
			// line just past a 1 MiB piece.
			io.WriteString(out, strings.Repeat("a", open))
			k := min(len(c.End)-1, 1<<20-open%(1<<20)+3)
			io.WriteString(out, c.End[:k])
			io.WriteString(out, c.End[k:]+" 0\n")
		})
		d := newDriver(types.HijackedResponse{Conn: host, Reader: bufio.NewReader(host)})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n := 0
		// A piece that does not end its line ends with a newline of
		// runner.LineWriter's, not the step's output.
		res, err := d.run(ctx, []string{"sh", "-c", "x"}, nil, "", func(stream, text string) { n += len(strings.TrimSuffix(text, "\n")) })
		cancel()
		host.Close()
		if err != nil || res.ExitCode != 0 || n != open {
			t.Errorf("an open line of %d bytes: exit %d, %v, %d bytes of output; want exit 0 (both markers read) and %d bytes", open, res.ExitCode, err, n, open)
		}
	}
}

// A driver that takes no more input does not hold a command past its
// context: the write to its stdin honours the deadline as the wait for
// its answer does (the write had none: a review of the hostile rows).
func TestDriverWriteHonoursTheDeadline(t *testing.T) {
	host, ctr := net.Pipe() // unbuffered: a write waits for a reader, and none comes
	defer ctr.Close()
	d := newDriver(types.HijackedResponse{Conn: host, Reader: bufio.NewReader(host)})
	defer host.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := d.run(ctx, []string{"true"}, nil, "", func(string, string) {})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("run = %v, want the context's deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command's write to a driver that reads nothing outlived its context by 10 s")
	}
}

// headroom's step driver is never the OOM killer's victim: it runs with
// the kernel's lowest adjustment, and the steps it starts (and theirs)
// with the engine's default, as the task's own processes would; on an
// engine that refuses the lowest, the driver at the default and every
// step raised above it, each by the same. Before, on cgroup v1 the kernel
// killed a step at the limit and then the driver (1 demo trial in 20 on a
// loaded host), ending the container under the trial: an infra-error
// where the harness has the agent's kill.
func TestDriverIsNeverTheOOMVictim(t *testing.T) {
	b, sb := startDriven(t, "driver-spared", model.Ratio{K: 1})
	// On an engine that refuses --oom-score-adj=-1000 (its runtime lacks
	// CAP_SYS_RESOURCE, or it is rootless: this project's CI host) the
	// driver keeps the engine's default and raises its steps instead.
	wantDriver, wantStep := "-1000", "0"
	if b.noOOMSpare.Load() {
		wantDriver, wantStep = "0", "raised" // by stepRaise's least, the same for every step
	}
	// A step that starts a job of its own and waits for it: while it
	// runs, each process of the container is read from the host.
	step, err := wire.Profile{Style: "pip", Packages: []string{"p"}, DurationMS: 4000, BaseMB: 2, Children: 1, ChildMB: 2, ChildLenMS: 3000}.Argv("spared")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once bool
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(context.Background(), step, nil, "", func(stream, text string) {
			if !once {
				once = true
				close(started)
			}
		})
		done <- err
	}()
	cg := sb.(*sandbox).cg.Dir()
	adj := map[string][]string{} // "driver" or "step" → their adjustments
	deadline := time.Now().Add(30 * time.Second)
	for len(adj["step"]) < 2 && time.Now().Before(deadline) {
		clear(adj)
		procs, _ := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
		for _, pid := range strings.Fields(string(procs)) {
			v, err1 := os.ReadFile("/proc/" + pid + "/oom_score_adj")
			n := nsPID("/proc/" + pid)
			if err1 != nil || n == 0 {
				continue
			}
			who := "step"
			if n == 1 {
				who = "driver"
			}
			adj[who] = append(adj[who], strings.TrimSpace(string(v)))
		}
		time.Sleep(20 * time.Millisecond) // polling the kernel's files, not waiting on an event
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("OOM score adjustments: %v", adj)
	if !slices.Equal(adj["driver"], []string{wantDriver}) {
		t.Errorf("the driver's adjustment %v, want [%s]: the kernel may choose it before the task's processes", adj["driver"], wantDriver)
	}
	if len(adj["step"]) < 2 {
		t.Fatalf("saw %d step processes, want the step and its job", len(adj["step"]))
	}
	for _, v := range adj["step"] {
		if wantStep == "raised" && v != "0" && !strings.HasPrefix(v, "-") && v == adj["step"][0] {
			continue
		}
		if v != wantStep {
			t.Errorf("a step's process has adjustment %s, want %s (all the task's alike, so the kernel's order among them is the harness's): %v", v, wantStep, adj["step"])
		}
	}
}

// A step whose memory is held where no process's RSS counts it (tmpfs)
// leaves headroom's step driver the kernel's largest candidate at the
// limit. Where the engine spares the driver (-1000), the kernel takes the
// task's processes and the trial is the limit's. Where it cannot (an
// engine that refuses the score: the memo says so here), the kernel takes
// the driver, and the kernel's report says tmpfs held the memory at the
// limit: the task's own kill, graded as such (round nine; it was
// driver-killed, never graded, and a resume reran it to the same end),
// never the engine's going away (it was engine-lost, as the demo's 1x was
// 1 time in 20 here). The container is removed either way.
func TestDriverKilledByTheTasksTmpfs(t *testing.T) {
	needDebian(t)
	task := model.Task{Name: "test/shm-fill", Image: DebianImage, IdleCommand: []string{"sleep", "infinity"}, Network: "none",
		Resources: model.Resources{CPUs: 1, MemoryBytes: 48 * model.MiB}, AgentTimeout: time.Minute, VerifierTimeout: time.Minute,
		Verifier: model.Step{Name: "verify", Argv: []string{"bash", "-c", "true"}},
		Agents: []model.Agent{{Name: "filler", Steps: []model.Step{{Name: "fill",
			Argv: []string{"bash", "-c", "head -c 60M /dev/zero > /dev/shm/fill; sleep 1; head -c 40M /dev/zero | tail -c 1 >/dev/null"}}}}}}
	task.SetProfile(model.ProfileHarbor)
	plan, err := model.NewPlan(model.PlanSpec{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}}, Repeats: 1, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name              string
		unspared, unheard bool
	}{{"spared", false, false}, {"unspared", true, false}, {"unspared, no kernel report", true, true}} {
		unspared, unheard := c.unspared, c.unheard
		t.Run(c.name, func(t *testing.T) {
			opts := Options{DriverBinary: testBinary}
			if unheard {
				// As when the kernel dropped its reports (ten in five
				// seconds) or its log cannot be read: the driver's kill
				// is known from the container's exit alone, and the
				// last reading's tmpfs pages say whose it was.
				opts.KernelLog = filepath.Join(t.TempDir(), "no-kmsg")
			}
			if unspared {
				opts.OOMSpareMemo = filepath.Join(t.TempDir(), "oom-spare-refused")
				if err := os.WriteFile(opts.OOMSpareMemo, []byte("test: as an engine that refuses -1000\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := newBackend(t, opts)
			res, named := runOneTrial(t, b, plan, task)
			t.Logf("%s/%s: %s; kills %q", res.Outcome, res.Cause, res.Reason, named)
			if !unspared && b.noOOMSpare.Load() {
				t.Logf("this engine refused the driver's -1000 (as on this project's CI host): it ran unspared")
				unspared = true
			}
			if res.StepRunner != runner.StepsByDriver {
				t.Fatalf("steps ran by %q, want the driver's", res.StepRunner)
			}
			if !res.StateOOMKilled && len(res.OOMs) == 0 {
				t.Fatalf("no OOM kill at 48MiB with 60MiB in tmpfs: %s", res.Reason)
			}
			driver := slices.ContainsFunc(res.OOMs, func(o model.OOMEvent) bool { return o.Driver })
			switch {
			case res.Cause == model.CauseEngineLost:
				t.Errorf("a kill at the container's own limit is recorded as the engine going away: %s", res.Reason)
			case res.Cause == model.CauseDriverKilled:
				t.Errorf("the task's tmpfs at the limit is recorded as headroom's failure, not graded: %s", res.Reason)
			case unspared && driver && (res.Outcome != model.OOMKilled || res.Cause != model.CauseOwnLimit || !strings.Contains(res.Reason, "tmpfs pages")):
				t.Errorf("unspared driver killed by the task's tmpfs: %s/%s, want oom-killed/own-limit saying the tmpfs held the memory: %s", res.Outcome, res.Cause, res.Reason)
			case unheard && !driver:
				t.Logf("the kernel took another process than the driver: nothing to stand in for")
			case unheard && (res.Outcome != model.OOMKilled || res.Cause != model.CauseOwnLimit || !strings.Contains(res.Reason, "the kernel logged no report")):
				t.Errorf("unspared, unreported driver kill with the task's tmpfs in the last reading: %s/%s, want oom-killed/own-limit saying so: %s", res.Outcome, res.Cause, res.Reason)
			case unspared && !driver:
				t.Logf("the kernel's log was not read here (or it took another process): the driver's kill cannot be named")
			case !unspared && driver:
				t.Errorf("the driver ran spared and was killed anyway: %s/%s: %s", res.Outcome, res.Cause, res.Reason)
			}
			if strings.Contains(res.Reason, "(headroom step driver)") {
				t.Errorf("the reason names the driver by its process-list name: %s", res.Reason)
			}
		})
	}
}

// runOneTrial runs plan's one trial of task on b and returns its result
// and each OOM kill's event ("<command> driver=<bool>").
func runOneTrial(t *testing.T, b *Backend, plan model.Plan, task model.Task) (*model.TrialResult, []string) {
	t.Helper()
	r, err := runner.New(b, runner.Config{Experiment: testExperimentPrefix, Plan: plan, Tasks: []model.Task{task}, Concurrency: 1, GuaranteeCapacityBytes: 8 << 30})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 256)
	go r.Run(context.Background(), out)
	var res *model.TrialResult
	var named []string
	deadline := time.After(4 * time.Minute)
	for done := false; !done; {
		select {
		case e, ok := <-out:
			switch e := e.(type) {
			case event.TrialEnded:
				res = &e.Result
			case event.OOMKill:
				named = append(named, fmt.Sprintf("%s driver=%v", e.OOM.Command, e.OOM.Driver))
			}
			done = !ok
		case <-deadline:
			t.Fatal("the trial did not end within 4 minutes")
		}
	}
	if res == nil {
		t.Fatal("no trial ended")
	}
	return res, named
}

// A driven container's streams carry every step's output: the engine
// must not log them on its host's disk (the ninth attacker: 16 MB of a
// step's output left 22 MB of json-file log, outside storage_mb, where
// an exec'd step's output is never logged).
func TestDrivenContainerIsNotLogged(t *testing.T) {
	b, sb := startDriven(t, "driver-nolog", model.Uncapped)
	info, err := b.cli.ContainerInspect(context.Background(), sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := info.HostConfig.LogConfig.Type; got != "none" {
		t.Errorf("log driver %q, want none", got)
	}
	if info.LogPath != "" {
		if st, err := os.Stat(info.LogPath); err == nil && st.Size() > 0 {
			t.Errorf("the engine logged %d bytes at %s", st.Size(), info.LogPath)
		}
	}
}
