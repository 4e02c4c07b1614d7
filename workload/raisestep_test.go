package workload

import (
	"bytes"
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
// step starts, to the kernel's highest score, and stays where it was:
// the kernel then takes a process of the task before the driver.
func TestUnsparedDriverRaisesItsSteps(t *testing.T) {
	before := ownScore(t)
	if before >= model.StepRaisedOOMScoreAdj {
		t.Skipf("this test runs at oom_score_adj %d already", before)
	}
	spare := spareFromOOM(os.Stderr)
	if spare == nil || !spare.raise {
		t.Fatalf("a driver at %d (not spared) does not raise its steps: %+v", before, spare)
	}
	var stdout, stderr bytes.Buffer
	code := runCommand(Command{Argv: []string{"/bin/sh", "-c", `read a < /proc/self/oom_score_adj; b=$(cat /proc/self/oom_score_adj); echo "$a $b $0 $1"`, "zero", "one"}, Env: []string{"X=1"}}, spare, &stdout, &stderr)
	want := "1000 1000 zero one\n"
	if code != 0 || stdout.String() != want {
		t.Errorf("step: exit %d, %q (stderr %q); want 0, %q (the step and its child raised, its argv kept)", code, stdout.String(), stderr.String(), want)
	}
	if after := ownScore(t); after != before {
		t.Errorf("the driver's own score went %d → %d", before, after)
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
		if code := runCommand(Command{Argv: c.argv}, &oomSpare{raise: true}, &stdout, &stderr); code != c.want {
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
	p := &probe{out: out, raise: raisesSteps()}
	if code := p.run(Command{Argv: []string{"/bin/sh", "-c", "cat /proc/self/oom_score_adj"}, End: "c1"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var said []string
	for _, l := range out.lines() {
		if l.Kind == ProbeOut {
			said = append(said, l.Text)
		}
	}
	if len(said) != 1 || said[0] != "1000" {
		t.Errorf("the probe's step read its score %q, want 1000", said)
	}
}
