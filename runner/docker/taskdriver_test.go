package docker

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// testBinary is the static workload binary the tests built (main_test).
var testBinary string

const debianSteps = `
[task]
name = "test/driver-in-debian"
[environment]
image = "` + DebianImage + `"
memory = "96M"
[environment.env]
FROM_TASK = "task-env"
[verifier]
command = ["sh", "-c", "test -f /tmp/made && echo verified"]
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "where"
  command = ["sh", "-c", "echo cwd=$(pwd) user=$(id -u) env=$FROM_TASK; echo to-stderr >&2; if [ -e /.headroom/hr-workload ]; then if touch /.headroom/hr-workload 2>/dev/null; then echo driver-writable; else echo driver-read-only; fi; fi"]
  [[agents.steps]]
  name = "allocate"
  command = ["python3", "-c", "b = bytearray(160 << 20); print('held')"]
  [[agents.steps]]
  name = "make"
  command = ["sh", "-c", "touch /tmp/made; exit 0"]
`

// A Debian task image runs its steps through headroom's own binary,
// mounted read-only, and records the same facts as the engine's exec:
// output of both streams, environment, exit codes, a kill (137) at 1x.
func TestTaskImageStepsThroughTheDriver(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := parseTask(t, debianSteps)
	task.Image = DebianImage
	byRunner := map[string]map[string]model.TrialResult{}
	for _, opts := range []Options{{DriverBinary: testBinary}, {}} {
		results, _ := sweep(t, newBackend(t, opts), []model.Task{task}, []model.Ratio{{K: 1}, model.Uncapped}, 1, context.Background(), nil)
		r := byRatio(results)
		byRunner[r["uncapped"].StepRunner] = r
	}
	drv, exe := byRunner[runner.StepsByDriver], byRunner[runner.StepsByExec]
	if drv == nil || exe == nil {
		t.Fatalf("step runners seen: %v, want driver and exec", keys(byRunner))
	}
	for name, r := range map[string]map[string]model.TrialResult{"driver": drv, "exec": exe} {
		free, tight := r["uncapped"], r["1x"]
		if free.Outcome != model.Passed {
			t.Errorf("%s uncapped: %s (%s)", name, free.Outcome, free.Reason)
		}
		if out := free.Steps[0].Output; !strings.Contains(out, "cwd=/ user=0 env=task-env") || !strings.Contains(out, "to-stderr") {
			t.Errorf("%s: first step's output %q", name, out)
		}
		if mounted := strings.Contains(free.Steps[0].Output, "driver-read-only"); mounted != (name == "driver") || strings.Contains(free.Steps[0].Output, "driver-writable") {
			t.Errorf("%s: the driver's mount, from the step: %q", name, free.Steps[0].Output)
		}
		if tight.Outcome != model.OOMKilled || tight.KilledInStep != "allocate" || tight.Steps[1].ExitCode != 137 {
			t.Errorf("%s 1x: %s in %q (%s), want oom-killed in allocate with exit 137", name, tight.Outcome, tight.KilledInStep, tight.Reason)
		}
	}
}

// Where the driver cannot run (a task with its own idle command, no
// binary), steps run by exec, and the record says so.
func TestTaskDriverFallsBackToExec(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{DriverBinary: testBinary})
	task := parseTask(t, debianSteps)
	task.Image = DebianImage
	if m, why := b.taskDriver(context.Background(), task); m == nil || why != "" {
		t.Fatalf("the Debian image should take the driver: %q", why)
	}
	task.IdleCommand = []string{"tail", "-f", "/dev/null"}
	if m, why := b.taskDriver(context.Background(), task); m != nil || !strings.Contains(why, "idle command") {
		t.Errorf("own idle command: %v %q", m, why)
	}
	if m, why := newBackend(t, Options{}).taskDriver(context.Background(), task); m != nil || why == "" {
		t.Errorf("no binary: %v %q", m, why)
	}
	// Why there is none is the trial's why (a new user's console built
	// with cgo took the engine's exec, and nothing said so).
	dynamic := "/x/hr-workload is dynamically linked: rebuild it with CGO_ENABLED=0 (`make build`)"
	if m, why := newBackend(t, Options{NoDriver: dynamic}).taskDriver(context.Background(), task); m != nil || why != dynamic {
		t.Errorf("a dynamic binary: %v %q; want %q", m, why, dynamic)
	}
}

// The platform says why a binary cannot be the step driver: a dynamically
// linked one, a remote engine, none found.
func TestDriverBinarySaysWhyNot(t *testing.T) {
	local, remote := &Platform{info: runner.PlatformInfo{Local: true}}, &Platform{info: runner.PlatformInfo{}}
	dynamic, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls to stand for a dynamically linked binary")
	}
	if CheckDriverBinary(dynamic) == nil {
		t.Skipf("%s is static here", dynamic)
	}
	for _, c := range []struct {
		p        *Platform
		exe, why string
	}{
		{local, dynamic, "dynamically linked"},
		{local, "", "could not be found or built"},
		{remote, dynamic, "another machine"},
	} {
		if bin, why := c.p.driverBinary(c.exe); bin != "" || !strings.Contains(why, c.why) {
			t.Errorf("%q (local %v): %q %q; want none, saying %q", c.exe, c.p.info.Local, bin, why, c.why)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A Harbor task directory's container keeps its image's ENTRYPOINT, so
// the driver is its first process only where the image has none.
func TestTaskDriverInHarborTasks(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{DriverBinary: testBinary})
	task := parseTask(t, debianSteps)
	task.Image, task.Format, task.IdleCommand = DebianImage, model.FormatHarbor, []string{"sh", "-c", "sleep infinity"}
	if m, why := b.taskDriver(context.Background(), task); m == nil {
		t.Errorf("a Harbor task on an image without ENTRYPOINT should take the driver: %q", why)
	}
	task.Image = testImage // the workload image has an ENTRYPOINT
	if m, why := b.taskDriver(context.Background(), task); m != nil || !strings.Contains(why, "ENTRYPOINT") {
		t.Errorf("image with ENTRYPOINT: %v %q", m, why)
	}
}

// A task granted CAP_SYS_PTRACE could read the non-dumpable driver's
// channel (its /proc/1/fd, or ptrace it): its steps take the engine's
// exec, and the record says why.
func TestTaskDriverRefusedToATaskThatMayPtrace(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{DriverBinary: testBinary})
	task := parseTask(t, debianSteps)
	task.Image = DebianImage
	for _, c := range []string{"SYS_PTRACE", "cap_sys_ptrace", "ALL"} {
		task.Capabilities = append(append([]string(nil), model.DefaultCapabilities...), c)
		if m, why := b.taskDriver(context.Background(), task); m != nil || !strings.Contains(why, c) {
			t.Errorf("granted %s: driver %v (%q), want exec and why", c, m, why)
		}
	}
	task.Capabilities = model.DefaultCapabilities
	if m, why := b.taskDriver(context.Background(), task); m == nil {
		t.Errorf("the default capabilities should take the driver: %q", why)
	}
}
