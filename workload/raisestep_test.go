package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// TestMain lets this test binary be the driver's own for StepMode:
// raiseStep starts a step through /proc/self/exe, here the test binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == StepMode {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func ownScore(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skip(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// A driver the engine could not spare raises every step, and what the
// step starts, by the same small amount (stepRaise), and stays where it
// was: the kernel then takes a process of the task before the driver.
func TestUnsparedDriverRaisesItsSteps(t *testing.T) {
	before := ownScore(t)
	if before >= model.StepRaisedOOMScoreAdj {
		t.Skipf("this test runs at oom_score_adj %d already", before)
	}
	spare := spareFromOOM(os.Stderr)
	if spare == nil || spare.raise == nil {
		t.Fatalf("a driver at %d (not spared) does not raise its steps: %+v", before, spare)
	}
	var stdout, stderr bytes.Buffer
	code := runCommand(Command{Argv: []string{"/bin/sh", "-c", `read a < /proc/self/oom_score_adj; b=$(cat /proc/self/oom_score_adj); echo "$a $b $0 $1"`, "zero", "one"}, Env: []string{"X=1"}}, spare, nil, &stdout, &stderr)
	var a, b int
	var zero, one string
	n, _ := fmt.Sscan(stdout.String(), &a, &b, &zero, &one)
	if code != 0 || n != 4 || a != b || a <= before || a > model.StepRaisedOOMScoreAdj || zero != "zero" || one != "one" {
		t.Errorf("step: exit %d, %q (stderr %q); want 0, the step and its child at one raised score, its argv kept", code, stdout.String(), stderr.String())
	}
	if after := ownScore(t); after != before {
		t.Errorf("the driver's own score went %d → %d", before, after)
	}
}

// The raise is the least that puts any process of the task, however
// small, above the driver (twice its resident set and 8 MiB more), so a
// process that sets its own score keeps its place against the rest.
func TestStepRaiseIsJustEnough(t *testing.T) {
	const page = 4096
	for _, limit := range []int64{16 << 20, 64 << 20, 256 << 20, 1 << 30, 8 << 30} {
		for _, rss := range []int64{2 << 20, 8 << 20, 30 << 20} {
			adj := stepRaise(rss, limit, 24<<30)
			bonus := int64(adj) * (limit / page / 1000) * page // what the kernel adds, in bytes
			if adj < model.StepRaisedOOMScoreAdj && bonus < 2*rss+8<<20 {
				t.Errorf("limit %s, driver %s: raise %d adds %s, not more than the driver's twice and 8 MiB", model.FormatBytes(limit), model.FormatBytes(rss), adj, model.FormatBytes(bonus))
			}
			if adj > 1 && int64(adj-2)*(limit/page/1000)*page >= 2*rss+8<<20 {
				t.Errorf("limit %s, driver %s: raise %d is more than it takes", model.FormatBytes(limit), model.FormatBytes(rss), adj)
			}
		}
	}
	for _, c := range []struct {
		rss, limit, host int64
		want             int
	}{
		{8 << 20, 64 << 20, 24 << 30, 385}, // 6,144 pages over 16 a point
		{8 << 20, 1 << 30, 24 << 30, 24},
		{8 << 20, 0, 24 << 30, 1},   // no limit: the host's 24 GiB
		{8 << 20, 2 << 20, 0, 1000}, // a limit under 4 MiB: the kernel's points move by none
		{600 << 20, 64 << 20, 0, 1000},
	} {
		if got := stepRaise(c.rss, c.limit, c.host); got != c.want {
			t.Errorf("stepRaise(%d, %d, %d) = %d, want %d", c.rss, c.limit, c.host, got, c.want)
		}
	}
	// The eleventh attacker's task at 256 MiB: a worker that set itself
	// 500 to be the victim stays above its coordinator at the raise.
	if adj := stepRaise(12<<20, 256<<20, 24<<30); adj >= 500 {
		t.Errorf("raise %d at 256 MiB: a worker at 500 no longer outranks the rest", adj)
	}
}

// A raised step that cannot be run ends as the engine's exec says it: 127
// for a program that is not there, 126 for one that cannot be executed.
func TestRaisedStepThatCannotRun(t *testing.T) {
	if ownScore(t) >= model.StepRaisedOOMScoreAdj {
		t.Skip("already raised")
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		argv []string
		want int
	}{
		{[]string{filepath.Join(dir, "absent")}, 127},
		{[]string{"no-such-program-anywhere"}, 127},
		{[]string{plain}, 126},
	} {
		var stdout, stderr bytes.Buffer
		if code := runCommand(Command{Argv: c.argv}, &oomSpare{raise: newRaiser()}, nil, &stdout, &stderr); code != c.want {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.argv, code, c.want, stderr.String())
		}
	}
}

// The probe, a pod's step driver, raises its steps as the Docker driver
// does when the engine could not spare it: a kubelet gives the pod's
// processes one score, the probe's too, and memory the task held in no
// process's resident set made the probe the kernel's choice.
func TestProbeRaisesItsSteps(t *testing.T) {
	if ownScore(t) >= model.StepRaisedOOMScoreAdj {
		t.Skip("already raised")
	}
	out := &syncBuffer{}
	p := &probe{out: out, raise: newRaiser()}
	if code := p.run(Command{Argv: []string{"/bin/sh", "-c", "cat /proc/self/oom_score_adj"}, End: "c1"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var said []string
	for _, l := range out.lines() {
		if l.Kind == ProbeOut {
			said = append(said, l.Text)
		}
	}
	if len(said) != 1 || said[0] == "0" || said[0] == "" {
		t.Errorf("the probe's step read its score %q, want it raised", said)
	}
}
