package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// inspector is a builder that says an image's config, as the local
// engine's does.
type inspector struct {
	builder
	cfg runner.ImageConfig
}

func (b *inspector) ImageConfig(context.Context, string) (runner.ImageConfig, error) {
	return b.cfg, nil
}

// harborTask is a Harbor task directory's task as the loader makes it:
// the image's ENTRYPOINT (if any) kept, sleep infinity its argument, the
// harbor profile; its verifier runs as root.
func harborTask() model.Task {
	return model.Task{
		Name: "harbor/image-user", Image: "image-user:1", Format: model.FormatHarbor, Profile: model.ProfileHarbor,
		IdleCommand: []string{"sleep", "infinity"}, Network: "bridge",
		Verifier: model.Step{Name: "verify", Argv: []string{"bash", "/tests/test.sh"}, User: "root"},
	}
}

// Round ten's left item on Kubernetes: a Harbor task whose image says
// `USER nobody` and whose `[verifier] user = "root"` ended its verifier
// 126 (a pod's exec, and the probe exec'd beside PID 1, run as the
// container's user; nobody cannot become root). Now the pod runs as root
// (runAsUser 0) where the harbor profile keeps SETUID and SETGID, its
// probe with it, and every step goes through the probe: as the image's
// USER unless it names a user, as on the Docker backend. Before: the
// pod's runAsUser was unset, the agent's step went by the API server's
// exec, and the verifier's went to a probe that could not switch.
func TestHarborImageUserPodRunsStepsAsItsUser(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	p.build = func(context.Context) (runner.ImageBuilder, error) {
		return &inspector{cfg: runner.ImageConfig{User: "nobody", Cmd: []string{"bash"}}}, nil
	}
	waited := make(chan string, 4)
	scheduler(t, cs, "hr", waited)
	ctx := context.Background()
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{Exe: "/bin/hr-workload"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	task := harborTask()
	var sb runner.Sandbox
	done := make(chan struct{})
	go func() {
		defer close(done)
		sb, err = b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t0001", Policy: policy(1)}, Task: task, Waiting: func(r string) { waited <- r }})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Start did not return")
	}
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods("hr").Get(ctx, sb.ID(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var main corev1.Container
	for _, c := range pod.Spec.Containers {
		if c.Name == mainContainer {
			main = c
		}
	}
	if sc := main.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 0 || sc.RunAsGroup == nil || *sc.RunAsGroup != 0 {
		t.Errorf("task container's security context %+v: want runAsUser 0, runAsGroup 0 (its probe root)", main.SecurityContext)
	}
	if strings.Join(main.Command, " ") != runner.TaskDriverPath+" as nobody --" || strings.Join(main.Args, " ") != "sleep infinity" {
		t.Errorf("PID 1: command %q args %q, want sleep infinity (the image has no ENTRYPOINT) as nobody", main.Command, main.Args)
	}
	if sb.StepRunner() != runner.StepsByDriver {
		t.Errorf("steps run by %q, want the probe (%s)", sb.StepRunner(), runner.StepsByDriver)
	}
	for _, c := range []struct{ user, want string }{{"", "nobody"}, {"root", "root"}} {
		var said []string
		res, err := sb.Exec(ctx, []string{"id"}, nil, c.user, func(stream, text string) { said = append(said, stream+":"+text) })
		if err != nil || res.ExitCode != 0 || strings.Join(said, "|") != "stdout:ran id|stderr:user="+c.want {
			t.Errorf("step as %q: %+v %v %q, want it run by the probe as %s", c.user, res, err, said, c.want)
		}
	}
	// The console's shell opens as the steps' user, as Docker's exec -u.
	if sh, err := p.Shell(sb.ID()); err != nil || !strings.HasSuffix(strings.Join(sh, " "), "-- "+runner.TaskDriverPath+" as nobody -- sh") {
		t.Errorf("shell %q %v: want it opened as nobody", sh, err)
	}
	if _, err := sb.Remove(ctx); err != nil {
		t.Fatal(err)
	}
}

// Who a pod's steps run as (stepUser): the probe is root only where the
// container may switch users, the container's user is not root, and
// nothing of the task's own would be root with it.
func TestStepUserRules(t *testing.T) {
	hardened := harborTask()
	hardened.Profile = model.ProfileHardened
	hardenedKeeps := hardened
	hardenedKeeps.Capabilities = []string{"SETUID", "SETGID"}
	named := harborTask()
	named.User = "1000:1000"
	own := harborTask()
	own.Format, own.IdleCommand = "", []string{"my-server"}
	home := harborTask()
	home.Env = []string{"HOME=/custom"}
	for _, c := range []struct {
		name        string
		task        model.Task
		cfg         runner.ImageConfig
		pid1, execd bool
		execSteps   bool
		want        string
		keepHome    bool
	}{
		{"image USER nobody", harborTask(), runner.ImageConfig{User: "nobody"}, false, true, false, "nobody", false},
		{"image ENV HOME", harborTask(), runner.ImageConfig{User: "nobody", SetsHome: true}, false, true, false, "nobody", true},
		{"task ENV HOME", home, runner.ImageConfig{User: "nobody"}, false, true, false, "nobody", true},
		{"probe PID 1", harborTask(), runner.ImageConfig{User: "app"}, true, false, false, "app", false},
		{"image root", harborTask(), runner.ImageConfig{User: "root"}, false, true, false, "", false},
		{"image no USER", harborTask(), runner.ImageConfig{}, false, true, false, "", false},
		{"task's own user", named, runner.ImageConfig{}, false, true, false, "1000:1000", false},
		{"an ENTRYPOINT stays PID 1, as its user", harborTask(), runner.ImageConfig{User: "nobody", Entrypoint: []string{"/start.sh", "-x"}}, false, true, false, "nobody", false},
		{"the task's own PID 1, as its user", own, runner.ImageConfig{User: "nobody"}, false, true, false, "nobody", false},
		{"hardened", hardened, runner.ImageConfig{User: "nobody"}, false, true, false, "", false},
		{"hardened, SETUID and SETGID kept", hardenedKeeps, runner.ImageConfig{User: "nobody"}, false, true, false, "nobody", false},
		{"no probe", harborTask(), runner.ImageConfig{User: "nobody"}, false, false, false, "", false},
		{"--exec-steps", harborTask(), runner.ImageConfig{User: "nobody"}, false, true, true, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _, _ := fakePlatform(t)
			cfg := c.cfg
			p.build = func(context.Context) (runner.ImageBuilder, error) { return &inspector{cfg: cfg}, nil }
			b := &backend{p: p, opts: runner.SandboxOptions{ExecSteps: c.execSteps}}
			got, keep, entrypoint := b.stepUser(context.Background(), c.task, c.pid1, c.execd)
			if got != c.want || keep != c.keepHome {
				t.Errorf("stepUser %q keepHome %v, want %q %v", got, keep, c.want, c.keepHome)
			}
			pod := Pod("exp", model.Trial{ID: "t1", Policy: policy(1)}, c.task, podConfig{Probe: c.pid1, ProbeExec: c.execd, StepUser: got, KeepHome: keep, Entrypoint: entrypoint, ProbeImage: "w:1"})
			ctr := pod.Spec.Containers[0]
			sc := ctr.SecurityContext
			if root := sc.RunAsUser != nil && *sc.RunAsUser == 0; root != (got != "") {
				t.Errorf("runAsUser %v with step user %q", sc.RunAsUser, got)
			}
			// PID 1, where it is not the probe, is the task's own, as the
			// container's user: the runtime's where the pod runs as it,
			// else through the probe's binary's as mode.
			pid1 := strings.Join(append(append([]string(nil), ctr.Command...), ctr.Args...), " ")
			want := strings.Join(c.task.IdleCommand, " ")
			if c.task.ForeignHarness() {
				want = strings.TrimSpace(strings.Join(c.cfg.Entrypoint, " ") + " " + want)
			}
			switch {
			case c.pid1:
				want = strings.Join(probeCommand(c.task, podConfig{}), " ")
			case got != "":
				home := ""
				if keep {
					home = " --keep-home"
				}
				want = runner.TaskDriverPath + " as" + home + " " + got + " -- " + want
			}
			if ctr.Command == nil && c.task.ForeignHarness() && !c.pid1 {
				pid1 = strings.TrimSpace(strings.Join(c.cfg.Entrypoint, " ") + " " + pid1) // the runtime's
			}
			if pid1 != want {
				t.Errorf("PID 1 %q, want %q", pid1, want)
			}
			// Where PID 1 becomes the user, its words on failing to are
			// the start's error (the container's log as its message).
			if becomes := got != "" && c.execd; becomes != (ctr.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError) {
				t.Errorf("termination message policy %q with PID 1 becoming %q", ctr.TerminationMessagePolicy, got)
			}
		})
	}
}
