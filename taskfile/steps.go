package taskfile

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// stageDir is where a step's workdir/ files wait in the container before
// they are copied into the working directory.
const stageDir = "/headroom/steps"

// fileHarborStep is one [[steps]] table of a Harbor multi-step task: its
// files are under steps/<name>/ (instruction.md, solution/solve.sh,
// tests/test.sh, workdir/ with an optional setup.sh).
type fileHarborStep struct {
	Name string `toml:"name"`
	// MinReward is a number (gating the "reward" key) or a table of keys.
	MinReward any   `toml:"min_reward"`
	Artifacts []any `toml:"artifacts"`
	Agent     struct {
		TimeoutSec *float64 `toml:"timeout_sec"`
		User       any      `toml:"user"`
	} `toml:"agent"`
	Verifier struct {
		TimeoutSec      *float64          `toml:"timeout_sec"`
		Env             map[string]string `toml:"env"`
		User            any               `toml:"user"`
		EnvironmentMode string            `toml:"environment_mode"`
		Environment     *fileEnvironment  `toml:"environment"`
		Collect         []fileCollect     `toml:"collect"`
	} `toml:"verifier"`
	Healthcheck *fileHealthcheck `toml:"healthcheck"`
}

// minReward reads min_reward as Harbor does: a number gates "reward", a
// table each of its keys.
func (s fileHarborStep) minReward(where string) (map[string]float64, error) {
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case float64:
			return x, true
		case int64:
			return float64(x), true
		}
		return 0, false
	}
	switch x := s.MinReward.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		out := map[string]float64{}
		for k, v := range x {
			n, ok := num(v)
			if !ok {
				return nil, fmt.Errorf("%s min_reward.%s must be a number (got %v)", where, k, v)
			}
			out[k] = n
		}
		return out, nil
	}
	if n, ok := num(s.MinReward); ok {
		return map[string]float64{"reward": n}, nil
	}
	return nil, fmt.Errorf("%s min_reward must be a number or a table of numbers (got %v)", where, s.MinReward)
}

// harborSteps makes t a multi-step task from the file's [[steps]], as
// Harbor runs one: per step, in the one container, its workdir/ files
// and setup.sh, its healthcheck, the agent with the step's instruction
// and timeout, then the top-level tests/ merged with the step's tests/
// and the step's test.sh (else the top-level one), with its own timeout,
// env and reward. The oracle runs each step's solution/solve.sh.
func (f *fileTask) harborSteps(dir string, t *model.Task) error {
	switch s := strings.ToLower(strings.TrimSpace(f.MultiStepRewardStrategy)); s {
	case "":
		t.PhaseReward = model.PhaseRewardMean // Harbor's default
	case model.PhaseRewardMean, model.PhaseRewardFinal:
		t.PhaseReward = s
	default:
		return fmt.Errorf("multi_step_reward_strategy must be %q or %q (got %q)", model.PhaseRewardMean, model.PhaseRewardFinal, f.MultiStepRewardStrategy)
	}
	taskUser, err := userName("[agent] user", f.Agent.User)
	if err != nil {
		return err
	}
	verifierUser, err := userName("[verifier] user", f.Verifier.User)
	if err != nil {
		return err
	}
	senv, spass, devs := envList("[solution.env]", f.Solution.Env)
	t.Deviations = append(t.Deviations, devs...)
	sharedTests := filepath.Join(dir, "tests")
	oracle := model.Agent{Name: AgentOracle, Description: "each step's reference solution, steps/<name>/solution/solve.sh"}
	artifacts := len(f.Artifacts)
	if sep, _ := separateMode(f.Verifier.EnvironmentMode, f.Verifier.Environment); sep {
		t.Deviations = append(t.Deviations, model.Deviation{What: "separate verifier environment not used",
			Detail: "multi-step task: each step's verifier runs in the agent's container, after the agent"})
	}
	if len(f.Verifier.Collect) > 0 {
		t.Deviations = append(t.Deviations, model.Deviation{What: "collect hooks not run",
			Detail: "multi-step task: its [[verifier.collect]] hooks are not run"})
	}
	for i, s := range f.Steps {
		where := fmt.Sprintf("[[steps]] #%d", i+1)
		if s.Name == "" {
			return fmt.Errorf("%s has no name: Harbor reads its files from steps/<name>/", where)
		}
		if strings.ContainsAny(s.Name, `/\`) || s.Name == "." || s.Name == ".." {
			return fmt.Errorf("%s name %q must be a directory name under steps/", where, s.Name)
		}
		where = fmt.Sprintf("[[steps]] %q", s.Name)
		sdir := filepath.Join(dir, "steps", s.Name)
		if !exists(sdir) {
			return fmt.Errorf("%s: its directory %s is missing", where, sdir)
		}
		p := model.Phase{Name: s.Name, AgentTimeout: t.AgentTimeout, VerifierTimeout: t.VerifierTimeout}
		if p.Instruction, err = readInstruction(dir, filepath.Join(sdir, "instruction.md")); err != nil {
			return err
		}
		if p.AgentTimeout, err = seconds(where+" agent.timeout_sec", s.Agent.TimeoutSec, t.AgentTimeout); err != nil {
			return err
		}
		if p.VerifierTimeout, err = seconds(where+" verifier.timeout_sec", s.Verifier.TimeoutSec, t.VerifierTimeout); err != nil {
			return err
		}
		if p.MinReward, err = s.minReward(where); err != nil {
			return err
		}
		if p.Healthcheck, err = s.Healthcheck.toHealthcheck(where + " healthcheck"); err != nil {
			return err
		}
		agentUser := taskUser
		if u, err := userName(where+" agent.user", s.Agent.User); err != nil {
			return err
		} else if u != "" {
			agentUser = u
		}
		p.AgentUser = agentUser
		if wd := filepath.Join(sdir, "workdir"); exists(wd) {
			stage := stageDir + "/" + s.Name
			p.Setup = append(p.Setup, model.Step{
				Name: s.Name + "/workdir", Show: "copy steps/" + s.Name + "/workdir/ into the working directory",
				Argv:  []string{"sh", "-c", `cp -a "$0"/. . && rm -rf "$0"`, stage},
				Files: []model.Upload{{From: wd, To: stage}},
			})
			if exists(filepath.Join(wd, "setup.sh")) {
				// Harbor runs it by its absolute path from the working
				// directory, as the step's agent user.
				p.Setup = append(p.Setup, model.Step{
					Name: s.Name + "/setup.sh", Show: "bash setup.sh",
					Argv: []string{"sh", "-c", `exec bash "$PWD/setup.sh"`}, User: agentUser,
				})
			}
		}
		stepTests := filepath.Join(sdir, "tests")
		for _, d := range []string{stepTests, sharedTests, filepath.Join(sdir, "workdir")} {
			if err := linkedOut(dir, d); err != nil {
				return err
			}
		}
		if !exists(filepath.Join(stepTests, "test.sh")) && !exists(filepath.Join(sharedTests, "test.sh")) {
			return fmt.Errorf("%s: no verifier: add %s or a shared %s", where, filepath.Join(stepTests, "test.sh"), filepath.Join(sharedTests, "test.sh"))
		}
		// The step's tests land over the shared ones: its test.sh wins.
		var files []model.Upload
		for _, d := range []string{sharedTests, stepTests} {
			if exists(d) {
				files = append(files, model.Upload{From: d, To: TestsDir})
			}
		}
		files = append(files, model.Upload{To: VerifierLogDir})
		merged := map[string]string{}
		for k, v := range f.Verifier.Env {
			merged[k] = v
		}
		for k, v := range s.Verifier.Env {
			merged[k] = v
		}
		venv, vpass, devs := envList(where+" verifier.env", merged)
		t.Deviations = append(t.Deviations, devs...)
		vuser := verifierUser
		if u, err := userName(where+" verifier.user", s.Verifier.User); err != nil {
			return err
		} else if u != "" {
			vuser = u
		}
		testSh := filepath.Join(stepTests, "test.sh")
		if !exists(testSh) {
			testSh = filepath.Join(sharedTests, "test.sh")
		}
		p.Verifier = model.Step{
			Name: s.Name + "/verify", Show: "bash " + TestsDir + "/test.sh",
			Argv: []string{TestsDir + "/test.sh"}, Trace: true, SelfTraced: tracesItself(dir, testSh),
			TeeStdout: TestStdoutFile, NeedBash: true,
			Env: venv, PassEnv: vpass, User: vuser, Files: files,
		}
		if v := s.Verifier; v.EnvironmentMode == "separate" || (v.Environment != nil && v.EnvironmentMode != "shared") {
			t.Deviations = append(t.Deviations, model.Deviation{What: "separate verifier environment not used",
				Detail: "step " + s.Name + ": the verifier runs in the agent's container, after the agent"})
		}
		solve := filepath.Join(sdir, "solution", "solve.sh")
		if ok, err := inTask(dir, solve); err != nil {
			return err
		} else if ok {
			oracle.Steps = append(oracle.Steps, model.Step{
				Name: s.Name + "/solve", Show: "bash " + SolutionDir + "/solve.sh",
				Argv: []string{SolutionDir + "/solve.sh"}, Trace: true, SelfTraced: tracesItself(dir, solve), NeedBash: true, OutputFile: OracleLogFile, Phase: s.Name,
				Env: senv, PassEnv: spass,
				Files: []model.Upload{{From: filepath.Join(sdir, "solution"), To: SolutionDir}, {To: AgentLogDir}},
			})
		}
		artifacts += len(s.Artifacts)
		t.Phases = append(t.Phases, p)
	}
	if artifacts > 0 {
		t.Deviations = append(t.Deviations, model.Deviation{What: "artifacts not collected",
			Detail: fmt.Sprintf("%d artifact path(s) Harbor copies out after each step are not collected; the verdict does not depend on them", artifacts)})
	}
	t.Verifier = t.Phases[0].Verifier
	if len(oracle.Steps) > 0 {
		t.Agents = append(t.Agents, oracle)
	}
	return nil
}
