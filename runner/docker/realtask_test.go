package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/headroom-eval/headroom/workload/wire"
)

// debianOnce makes the Debian image once per test process (debootstrap the
// first time on a machine, about a minute and a half; cached after).
var (
	debianOnce sync.Once
	debianErr  error
)

func needDebian(t testing.TB) {
	t.Helper()
	needEngine(t) // -short (make unit): skipped, saying so, not a nil client
	debianOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		_, debianErr = EnsureDebianImage(ctx, testCli, false, func(l string) { t.Log(l) })
	})
	if debianErr != nil {
		t.Fatalf("the Debian image these tests build on: %v", debianErr)
	}
}

// loadTB loads a Terminal-Bench task directory from testdata, builds its
// image and keeps only the named agent.
func loadTB(t *testing.T, dir, agent string) model.Task {
	t.Helper()
	return loadTaskAt(t, "testdata/tb/"+dir, agent)
}

// loadTaskAt loads the task directory at dir, builds its image and keeps
// only the named agent.
func loadTaskAt(t *testing.T, dir, agent string) model.Task {
	t.Helper()
	l, err := taskfile.LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if task.Image, err = EnsureTaskImage(ctx, testCli, task, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	a, ok := task.Agent(agent)
	if !ok {
		t.Fatalf("task %s has no agent %s", task.Name, agent)
	}
	task.Agents = []model.Agent{a}
	return task
}

func byRatio(results []model.TrialResult) map[string]model.TrialResult {
	m := map[string]model.TrialResult{}
	for _, r := range results {
		m[r.Ratio.String()] = r
	}
	return m
}

// A Harbor task built from its Dockerfile, run by its oracle: at 1x the
// solution's heavy command is OOM-killed (named as the traced command),
// uncapped it passes by the reward file.
func TestOracleOfABuiltTaskAtOneXAndUncapped(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadTB(t, "oracle-heavy", taskfile.AgentOracle)
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}, {Uncapped: true}}, 1, context.Background(), nil)
	r := byRatio(results)
	tight, free := r["1x"], r["uncapped"]
	if tight.Outcome != model.OOMKilled || !strings.HasPrefix(tight.KilledInStep, "python3 -c") {
		t.Errorf("1x: %s in step %q (%s), want oom-killed in the python3 command", tight.Outcome, tight.KilledInStep, tight.Reason)
	}
	if tight.Reward == nil || *tight.Reward != 0 {
		t.Errorf("1x reward %v, want 0 (the verifier ran and found nothing)", tight.Reward)
	}
	if free.Outcome != model.Passed || free.Reward == nil || *free.Reward != 1 {
		t.Errorf("uncapped: %s reward %v (%s), want passed with reward 1", free.Outcome, free.Reward, free.Reason)
	}
	// solve.sh ran as its commands, each a step with its own peak.
	var names []string
	for _, s := range free.Steps {
		names = append(names, s.Phase+":"+s.Name)
	}
	want := []string{"agent:cd /app", "agent:echo solving", "agent:python3 -c 'x = bytearray(96", "agent:echo finished", "verifier:grep -q done /app/out.txt", "verifier:echo 1"}
	ok := len(names) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(names[i], want[i])
	}
	if !ok {
		t.Errorf("steps %q\nwant %q", names, want)
	}
	for _, s := range free.Steps {
		if strings.HasPrefix(s.Name, "python3") && s.PeakWorkingSetBytes < 64*model.MiB && s.KernelPeakBytes < 96*model.MiB {
			t.Errorf("the 96 MiB step's peaks: sampled %d, kernel %d", s.PeakWorkingSetBytes, s.KernelPeakBytes)
		}
	}
}

// The verifier itself OOM-killed: the trial is oom-killed in the
// verifier's command, not failed.
func TestVerifierOOMKilled(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadTB(t, "verifier-oom", taskfile.AgentOracle)
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}, {Uncapped: true}}, 1, context.Background(), nil)
	r := byRatio(results)
	tight := r["1x"]
	if tight.Outcome != model.OOMKilled || len(tight.OOMs) == 0 {
		t.Fatalf("1x: %s (%s), want oom-killed", tight.Outcome, tight.Reason)
	}
	var phase string
	for _, s := range tight.Steps {
		if s.Name == tight.KilledInStep {
			phase = s.Phase
		}
	}
	if phase != "verifier" || !strings.HasPrefix(tight.KilledInStep, "python3") {
		t.Errorf("killed in %q (phase %q), want the verifier's python3 command", tight.KilledInStep, phase)
	}
	if free := r["uncapped"]; free.Outcome != model.Passed {
		t.Errorf("uncapped: %s (%s), want passed", free.Outcome, free.Reason)
	}
}

// Built images are cached by the context's digest; a base image that
// cannot be pulled fails with what to do.
func TestTaskImageCacheAndUnreachableBase(t *testing.T) {
	needEngine(t)
	needDebian(t)
	l, err := taskfile.LoadTaskDir("testdata/tb/oracle-heavy")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := EnsureTaskImage(ctx, testCli, l.Task, nil)
	if err != nil {
		t.Fatal(err)
	}
	built := false
	second, err := EnsureTaskImage(ctx, testCli, l.Task, func(string) { built = true })
	if err != nil || second != first || built {
		t.Errorf("second ensure: %s (built again: %v, err %v), want the cached %s", second, built, err, first)
	}
	bad, err := taskfile.LoadTaskDir("testdata/tb/unreachable-base")
	if err != nil {
		t.Fatal(err)
	}
	_, err = EnsureTaskImage(ctx, testCli, bad.Task, nil)
	if err == nil || !strings.Contains(err.Error(), "test/unreachable-base") || !strings.Contains(err.Error(), "base image") {
		t.Errorf("unreachable base: %v, want an error naming the task and the base image", err)
	}
	// The task's build_timeout_sec (2 s) stops a build that would take 60.
	slow, err := taskfile.LoadTaskDir("testdata/tb/slow-build")
	if err != nil {
		t.Fatal(err)
	}
	_, err = EnsureTaskImage(ctx, testCli, slow.Task, nil)
	if err == nil || !strings.Contains(err.Error(), "ran past its time limit (2s") {
		t.Errorf("slow build: %v, want the build time limit named", err)
	}
}

// The real install workload: apt really installs pandas, networkx and
// scikit-learn from the local cache. At 1x (128 MiB) the install is
// OOM-killed; uncapped the whole trial passes.
func TestRealInstallWorkload(t *testing.T) {
	needEngine(t)
	if testing.Short() {
		t.Skip("the real install takes about a minute")
	}
	needDebian(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := EnsureDebianCacheImage(ctx, testCli, false, func(l string) { t.Log(l) })
	if err != nil {
		t.Fatal(err)
	}
	cat, err := taskfile.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	task, err := cat.Find("real/bn-fit-install")
	if err != nil {
		t.Fatal(err)
	}
	task.Image = img
	heavy, _ := task.Agent("heavy")
	task.Agents = []model.Agent{heavy}
	start := time.Now()
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}, {Uncapped: true}}, 1, ctx, nil)
	r := byRatio(results)
	tight, free := r["1x"], r["uncapped"]
	for _, res := range results {
		for _, s := range res.Steps {
			t.Logf("%s %s: %s exit %d, %.1fs, peak %s, kernel peak %s, kills %d", res.Ratio, res.Outcome, s.Name, s.ExitCode, s.Duration().Seconds(),
				model.FormatBytes(s.PeakWorkingSetBytes), model.FormatBytes(s.KernelPeakBytes), s.OOMKills)
		}
	}
	t.Logf("both trials in %s", time.Since(start).Round(time.Second))
	if (tight.Outcome != model.OOMKilled && tight.Outcome != model.PassedAfterOOM) || tight.KilledInStep != "install" {
		t.Errorf("1x: %s in %q (%s), want oom-killed in install", tight.Outcome, tight.KilledInStep, tight.Reason)
	}
	if free.Outcome != model.Passed {
		t.Errorf("uncapped: %s (%s), want passed", free.Outcome, free.Reason)
	}
}

// A traced solve.sh in a real container: each command keeps its own exit
// status (a failing one does not stop the script, nor is it recorded as
// 0), and a command whose output has no final newline does not swallow
// the next command's trace line. Without bash (sh -x) the statuses but
// the last are said to be unknown, never 0.
func TestTracedScriptStatusesInAContainer(t *testing.T) {
	needEngine(t)
	needDebian(t)
	type step struct{ exit, output string }
	cases := []struct {
		dir  string
		want map[string]step
	}{
		{"traced-statuses", map[string]step{
			"X=abc":                     {"0", ""},
			"false":                     {"1", ""},
			"nosuchcmd":                 {"127", "command not found"},
			"printf %s abc | rev":       {"0", "cba"},
			"echo abc-tail | cut -c1-3": {"0", "abc"},
			"echo done":                 {"0", ""},
		}},
		{"traced-statuses-sh", map[string]step{
			"X=abc":     {"?", ""},
			"false":     {"?", ""},
			"nosuchcmd": {"?", "not found"},
			"echo done": {"0", ""},
		}},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			task := loadTB(t, c.dir, taskfile.AgentOracle)
			if c.dir == "traced-statuses-sh" {
				// A Harbor task's steps need bash, as Harbor's `bash -c`
				// does (round eleven); sh's trace is what a headroom TOML
				// task's steps get in an image without bash.
				for i := range task.Agents {
					for j := range task.Agents[i].Steps {
						task.Agents[i].Steps[j].NeedBash = false
					}
				}
				task.Verifier.NeedBash = false
			}
			results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{Uncapped: true}}, 1, context.Background(), nil)
			if len(results) != 1 {
				t.Fatalf("%d results", len(results))
			}
			r := results[0]
			if r.Outcome != model.Passed {
				t.Errorf("outcome %s (%s), want passed: the script went on past its failures", r.Outcome, r.Reason)
			}
			got := map[string]model.StepResult{}
			var table []string
			for _, s := range r.Steps {
				if s.Phase == "agent" {
					got[s.Name] = s
					table = append(table, fmt.Sprintf("%s => %s %q", s.Name, s.ExitText(), s.Output))
				}
			}
			for name, w := range c.want {
				s, ok := got[name]
				if !ok {
					t.Errorf("no step %q in\n%s", name, strings.Join(table, "\n"))
					continue
				}
				if s.ExitText() != w.exit || !strings.Contains(s.Output, w.output) {
					t.Errorf("step %q exited %s with output %q, want %s with %q", name, s.ExitText(), s.Output, w.exit, w.output)
				}
				if w.exit == "?" && (s.ExitUnknown == "" || s.ExitCode != -1) {
					t.Errorf("step %q: unknown status recorded as %d (%q)", name, s.ExitCode, s.ExitUnknown)
				}
			}
			// A command whose trace goes on over two lines (a quoted
			// newline) is shown whole, and its output is only what it
			// printed: the trace's second line was its output before.
			// (dash's trace quotes nothing: there, it cannot be told.)
			if s, ok := got[`printf '%s\n' 'two lines'`]; c.dir == "traced-statuses" && (!ok || s.Output != "two\nlines" || s.Show != "printf '%s\\n' 'two\nlines'") {
				t.Errorf("the two-line command: found %v, shown %q, output %q; want its whole command and only what it printed\n%s", ok, s.Show, s.Output, strings.Join(table, "\n"))
			}
			for _, s := range r.Steps {
				if strings.Contains(s.Output, "[hr ") || strings.Contains(s.Output, "headroom-trace") || strings.ContainsRune(s.Output, 0x1e) {
					t.Errorf("trace text in step %q output %q", s.Name, s.Output)
				}
			}
			if c.dir == "traced-statuses-sh" {
				// sh traces a pipeline's commands as steps of their own,
				// each status unknown; rev's and cut's lines are output.
				var all []string
				for _, s := range r.Steps {
					all = append(all, s.Output)
				}
				if joined := strings.Join(all, "\n"); !strings.Contains(joined, "cba") || !strings.Contains(joined, "abc") {
					t.Errorf("outputs %q lack cba and abc", joined)
				}
			}
		})
	}
}

// A traced command in an image with a shell whose PID 1 is headroom's step
// driver: through the driver and through the engine's exec, the same
// commands, outputs and statuses (the trace travels in the step's output
// either way, and a line left open by rev does not hide echo's trace).
func TestTracedCommandThroughDriverAndExec(t *testing.T) {
	needEngine(t)
	needDebian(t)
	dir := t.TempDir()
	dockerfile := "FROM " + testImage + " AS workload\nFROM " + DebianImage + "\nCOPY --from=workload " + wire.Binary + " " + wire.Binary + "\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	task := parseTask(t, `
[task]
name = "test/traced-driver"
[environment]
image = "builtin"
memory = "128M"
[verifier]
workload = { duration_ms = 10 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "placeholder"
  workload = { duration_ms = 10 }
`)
	task.Build = &model.Build{Context: dir, Dockerfile: "Dockerfile"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if task.Image, err = EnsureTaskImage(ctx, testCli, model.Task{Name: task.Name, Build: task.Build}, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	// Its tag follows the workload binary, which changes with every
	// build of headroom: remove it rather than leave one per build.
	t.Cleanup(func() {
		_, _ = testCli.ImageRemove(context.Background(), task.Image, image.RemoveOptions{PruneChildren: true})
	})
	task.Agents[0].Steps = []model.Step{{Name: "agent", Argv: []string{"-c", `false; nosuchcmd; X=abc; printf %s "$X" | rev; echo "$X-tail" | cut -c1-3`}, Trace: true}}
	bothStepRunners(t, func(t *testing.T, b *Backend, runs string) {
		results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{model.Uncapped}, 1, context.Background(), nil)
		r := results[0]
		if r.StepRunner != runs {
			t.Errorf("steps ran by %q, want %q", r.StepRunner, runs)
		}
		var got []string
		for _, s := range r.Steps {
			if s.Phase == "agent" {
				got = append(got, fmt.Sprintf("%s => %s %q", s.Name, s.ExitText(), s.Output))
			}
		}
		want := []string{`false => 1 ""`, `nosuchcmd => 127 "bash: line 1: nosuchcmd: command not found"`, `X=abc => 0 ""`,
			`printf %s abc | rev => 0 "cba"`, `echo abc-tail | cut -c1-3 => 0 "abc"`}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("steps\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if r.Outcome != model.Passed {
			t.Errorf("outcome %s (%s): the command's last pipeline exited 0", r.Outcome, r.Reason)
		}
	})
}
