package taskfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// A Harbor multi-step task directory becomes one phase per [[steps]], read
// as Harbor's multi-step trial reads it.
func TestHarborMultiStepDirectory(t *testing.T) {
	l, err := LoadTaskDir("testdata/tbdirs/harbor-multi-step")
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	if len(l.Ignored) != 0 {
		t.Errorf("ignored %v, want none", l.Ignored)
	}
	if got := strings.Join(task.PhaseNames(), ","); got != "one,two" || task.PhaseReward != model.PhaseRewardFinal {
		t.Fatalf("phases %s strategy %q", got, task.PhaseReward)
	}
	one, two := task.Phases[0], task.Phases[1]
	if one.Instruction != "Write /app/out.txt.\n" || two.Instruction != "Append to /app/out.txt.\n" {
		t.Errorf("instructions %q %q", one.Instruction, two.Instruction)
	}
	// A step's timeout, else the task's ([verifier] unset: Harbor's 600 s).
	if one.AgentTimeout != 30*time.Second || two.AgentTimeout != 120*time.Second || one.VerifierTimeout != 600*time.Second || two.VerifierTimeout != 45*time.Second {
		t.Errorf("timeouts agent %v %v verifier %v %v", one.AgentTimeout, two.AgentTimeout, one.VerifierTimeout, two.VerifierTimeout)
	}
	if fmt.Sprint(one.MinReward) != "map[reward:1]" || fmt.Sprint(two.MinReward) != "map[reward:0.5 style:1]" {
		t.Errorf("min_reward %v %v", one.MinReward, two.MinReward)
	}
	if one.Healthcheck != nil || two.Healthcheck == nil || two.Healthcheck.Retries != 2 || two.Healthcheck.Interval != time.Second || two.Healthcheck.Test[3] != "test -f /app/ready" {
		t.Errorf("healthchecks %+v %+v", one.Healthcheck, two.Healthcheck)
	}
	// workdir/ is copied into the working directory, then setup.sh runs
	// there as the step's agent user.
	if len(one.Setup) != 0 || len(two.Setup) != 2 {
		t.Fatalf("setup steps %d %d", len(one.Setup), len(two.Setup))
	}
	abs, _ := filepath.Abs("testdata/tbdirs/harbor-multi-step")
	if f := two.Setup[0].Files; len(f) != 1 || f[0].From != filepath.Join(abs, "steps/two/workdir") || two.Setup[1].User != "agent" {
		t.Errorf("setup %+v", two.Setup)
	}
	// The shared tests/ then the step's: its test.sh lands last.
	var from []string
	for _, u := range two.Verifier.Files {
		from = append(from, strings.TrimPrefix(u.From, abs+"/")+">"+u.To)
	}
	if got := strings.Join(from, ","); got != "tests>/tests,steps/two/tests>/tests,>/logs/verifier" {
		t.Errorf("step two verifier uploads %s", got)
	}
	if !slices.Equal(one.Verifier.Env, []string{"OVERRIDDEN=task", "SHARED=task"}) || !slices.Equal(two.Verifier.Env, []string{"OVERRIDDEN=step", "SHARED=task"}) || !slices.Equal(two.Verifier.PassEnv, []string{"TOKEN=HOST_TOKEN:-none"}) {
		t.Errorf("verifier env %v / %v %v", one.Verifier.Env, two.Verifier.Env, two.Verifier.PassEnv)
	}
	if one.Verifier.User != "" || two.Verifier.User != "root" {
		t.Errorf("verifier users %q %q", one.Verifier.User, two.Verifier.User)
	}
	// The oracle solves the steps that ship a solution, each in its step.
	oracle, ok := task.Agent(AgentOracle)
	if !ok || len(oracle.Steps) != 1 || oracle.Steps[0].Phase != "one" || oracle.Steps[0].Files[0].From != filepath.Join(abs, "steps/one/solution") {
		t.Errorf("oracle %+v", oracle)
	}
	if nop, ok := task.Agent(AgentNop); !ok || nop.Steps[0].Phase != "" {
		t.Errorf("nop %+v: runs in every step", nop)
	}
	devs := deviationNames(task)
	for _, want := range []string{"artifacts not collected"} {
		if !slices.Contains(devs, want) {
			t.Errorf("deviations %v lack %q", devs, want)
		}
	}
}

// copyDir copies a fixture directory to a temporary one.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, info.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// Variations of a multi-step task.toml over the fixture's step directories.
func TestHarborMultiStepFields(t *testing.T) {
	const head = "[task]\nname = \"x/y\"\n[environment]\ndocker_image = \"img:1\"\n"
	tests := []struct {
		name    string
		toml    string
		prepare func(dir string) error
		check   func(t *testing.T, task model.Task)
		wantErr string
	}{
		{name: "mean by default, no gates", toml: head + "[[steps]]\nname = \"one\"\n[[steps]]\nname = \"two\"\n",
			check: func(t *testing.T, task model.Task) {
				if task.PhaseReward != model.PhaseRewardMean || task.Phases[0].MinReward != nil || task.Phases[0].AgentTimeout != model.DefaultAgentTimeout {
					t.Errorf("strategy %q min_reward %v agent timeout %v", task.PhaseReward, task.Phases[0].MinReward, task.Phases[0].AgentTimeout)
				}
			}},
		{name: "a step without its own test.sh takes the shared one",
			toml: head + "[[steps]]\nname = \"one\"\n",
			prepare: func(dir string) error {
				return os.Rename(filepath.Join(dir, "steps/one/tests/test.sh"), filepath.Join(dir, "tests/test.sh"))
			},
			check: func(t *testing.T, task model.Task) {
				if v := task.Phases[0].Verifier; len(v.Files) != 3 || v.Argv[0] != "/tests/test.sh" {
					t.Errorf("verifier %+v", v)
				}
			}},
		{name: "no test.sh anywhere refused", toml: head + "[[steps]]\nname = \"one\"\n",
			prepare: func(dir string) error { return os.Remove(filepath.Join(dir, "steps/one/tests/test.sh")) },
			wantErr: `[[steps]] "one": no verifier: add`},
		{name: "separate step verifier listed", toml: head + "[[steps]]\nname = \"one\"\n[steps.verifier]\nenvironment_mode = \"separate\"\n",
			check: func(t *testing.T, task model.Task) {
				if !slices.Contains(deviationNames(task), "separate verifier environment not used") {
					t.Errorf("deviations %v", deviationNames(task))
				}
			}},
		{name: "unknown step key listed", toml: head + "[[steps]]\nname = \"one\"\nfuture = 1\n"},
		{name: "missing step directory refused", toml: head + "[[steps]]\nname = \"three\"\n", wantErr: `[[steps]] "three": its directory`},
		{name: "unnamed step refused", toml: head + "[[steps]]\nmin_reward = 1\n", wantErr: "[[steps]] #1 has no name"},
		{name: "path as a name refused", toml: head + "[[steps]]\nname = \"../one\"\n", wantErr: "must be a directory name under steps/"},
		{name: "bad strategy refused", toml: "multi_step_reward_strategy = \"max\"\n" + head + "[[steps]]\nname = \"one\"\n", wantErr: `multi_step_reward_strategy must be "mean" or "final" (got "max")`},
		{name: "bad min_reward refused", toml: head + "[[steps]]\nname = \"one\"\nmin_reward = \"high\"\n", wantErr: "min_reward must be a number or a table of numbers"},
		{name: "bad step timeout refused", toml: head + "[[steps]]\nname = \"one\"\n[steps.agent]\ntimeout_sec = -1.0\n", wantErr: `[[steps]] "one" agent.timeout_sec must be a number of seconds`},
		{name: "step healthcheck without command refused", toml: head + "[[steps]]\nname = \"one\"\n[steps.healthcheck]\nretries = 2\n", wantErr: `[[steps]] "one" healthcheck command is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/tbdirs/harbor-multi-step")
			if err := os.WriteFile(filepath.Join(dir, "task.toml"), []byte(tt.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.prepare != nil {
				if err := tt.prepare(dir); err != nil {
					t.Fatal(err)
				}
			}
			l, err := LoadTaskDir(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "task.toml") {
					t.Fatalf("err = %v, want one naming task.toml and %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "unknown step key listed" {
				if !slices.Equal(l.Ignored, []string{"steps.future"}) {
					t.Errorf("ignored %v", l.Ignored)
				}
				return
			}
			tt.check(t, l.Task)
		})
	}
}

// A step's agent that times out no longer ends the trial (the runner
// verifies the step and goes on, as Harbor does): not a deviation.
func TestMultiStepTimeoutIsNotADeviation(t *testing.T) {
	l, err := LoadTaskDir("../runner/docker/testdata/tb/multi-step")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(deviationNames(l.Task), "agent timeout ends the trial") {
		t.Errorf("deviations %v still list the agent timeout", deviationNames(l.Task))
	}
}
