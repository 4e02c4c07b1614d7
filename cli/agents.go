package cli

import (
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

// AgentCommand is the agent a user supplies as a command template.
const AgentCommand = "command"

// agentFlags add a user's agent command and scale a run's tasks.
type agentFlags struct {
	command      string
	passEnv      []string
	timeoutScale float64
	passReward   float64
	// profile puts every task under one container profile ("": each
	// task's default).
	profile string
}

func (a *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.command, "agent-command", "", "add an agent named \"command\" to every task with a shell: this shell command runs in the container, with the instruction in $HEADROOM_INSTRUCTION and the file $HEADROOM_INSTRUCTION_FILE")
	fl.StringSliceVar(&a.passEnv, "pass-env", nil, "host environment variables given to the command agent (e.g. an API key); their values are redacted from every log, record and screen")
	fl.Float64Var(&a.timeoutScale, "timeout-scale", 1, "multiply every task's agent and verifier time limits")
	fl.Float64Var(&a.passReward, "pass-reward", 1, "reward a Harbor verifier must write to pass")
	fl.StringVar(&a.profile, "profile", "", "container profile for every task: harbor (the engine's default capabilities, no pids limit: what Harbor's Docker environment runs) or hardened (capabilities dropped, pids limit, no-new-privileges); default harbor for task directories, hardened for headroom's own and built-in tasks")
}

// settings is what the manifest records of the flags (names, no values).
func (a *agentFlags) settings() *store.AgentSettings {
	if a.command == "" && a.timeoutScale == 1 && a.passReward == 1 && a.profile == "" {
		return nil
	}
	return &store.AgentSettings{Command: a.command, PassEnv: a.passEnv, TimeoutScale: a.timeoutScale, PassReward: a.passReward, Profile: a.profile}
}

// agentFlagsFrom are the flags a manifest recorded.
func agentFlagsFrom(s *store.AgentSettings) agentFlags {
	if s == nil {
		return agentFlags{timeoutScale: 1, passReward: 1}
	}
	return agentFlags{command: s.Command, passEnv: s.PassEnv, timeoutScale: s.TimeoutScale, passReward: s.PassReward, profile: s.Profile}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// apply adds the command agent, scales time limits and sets the reward
// threshold; it returns the secrets the runner passes and redacts.
func (a *agentFlags) apply(tasks []model.Task) ([]model.Task, map[string]string, error) {
	if a.timeoutScale <= 0 || a.timeoutScale > 100 {
		return nil, nil, usagef("--timeout-scale must be more than 0 and at most 100 (got %v)", a.timeoutScale)
	}
	if a.profile != "" {
		p, err := model.ParseProfile(a.profile)
		if err != nil {
			return nil, nil, usagef("--profile: %v", err)
		}
		a.profile = p
	}
	if len(a.passEnv) > 0 && a.command == "" {
		return nil, nil, usagef("--pass-env is for the command agent: give --agent-command too")
	}
	secrets := map[string]string{}
	for _, n := range a.passEnv {
		if !envName.MatchString(n) {
			return nil, nil, usagef("--pass-env %q is not an environment variable name", n)
		}
		v, set, err := hostSecret(n)
		if !set {
			return nil, nil, usagef("--pass-env %s: %s is not set in headroom's environment", n, n)
		}
		if err != nil {
			return nil, nil, usagef("--pass-env %s: %v", n, err)
		}
		secrets[n] = v
	}
	out := make([]model.Task, len(tasks))
	for i, t := range tasks {
		t.AgentTimeout = time.Duration(float64(t.AgentTimeout) * a.timeoutScale)
		t.VerifierTimeout = time.Duration(float64(t.VerifierTimeout) * a.timeoutScale)
		if a.profile != "" {
			t.SetProfile(a.profile)
		}
		if t.Verdict.Reward != nil {
			r := *t.Verdict.Reward
			r.Pass = a.passReward
			t.Verdict.Reward = &r
		}
		if a.command != "" && t.Image != taskfile.BuiltinImage {
			if _, ok := t.Agent(AgentCommand); ok {
				return nil, nil, usagef("task %s already has an agent named %q; --agent-command would shadow it", t.Name, AgentCommand)
			}
			t.Agents = append(append([]model.Agent(nil), t.Agents...), commandAgent(t, a.command, a.passEnv))
		}
		out[i] = t
	}
	return out, secrets, nil
}

// hostSecret reads a passed-through variable from headroom's environment:
// set says whether it has a value at all; a value too short to redact
// from output is an error.
func hostSecret(name string) (value string, set bool, err error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return "", false, nil
	}
	if len(v) < runner.MinSecretLen {
		return "", true, fmt.Errorf("its value is shorter than %d characters, too short to redact from output safely", runner.MinSecretLen)
	}
	return v, true, nil
}

// taskSecrets reads from headroom's environment the host variables that
// tasks themselves pass through (Harbor's `KEY = "${KEY}"` in an env
// table). A task whose variable is unset or too short to redact gets an
// error naming it; the others are unaffected.
func taskSecrets(tasks []model.Task, secrets map[string]string) (ok []model.Task, problems []error) {
	for _, t := range tasks {
		entries := append([]string(nil), t.PassEnv...)
		entries = append(entries, t.Verifier.PassEnv...)
		for _, p := range t.Phases {
			entries = append(entries, p.Verifier.PassEnv...)
		}
		for _, a := range t.Agents {
			for _, st := range a.Steps {
				entries = append(entries, st.PassEnv...)
			}
		}
		var bad error
		for _, e := range entries {
			name, host, _, hasDefault := model.PassEnvDefault(e)
			if _, done := secrets[host]; done {
				continue
			}
			v, set, err := hostSecret(host)
			switch {
			case !set && hasDefault:
				// ${VAR:-default}: the default stands in, as in Harbor.
			case !set:
				bad = fmt.Errorf("task %s passes %s from headroom's environment to its %s, and %s is not set: set it, or leave the task out", t.Name, host, name, host)
			case err != nil:
				bad = fmt.Errorf("task %s passes %s from headroom's environment: %v", t.Name, host, err)
			default:
				secrets[host] = v
			}
			if bad != nil {
				break
			}
		}
		if bad != nil {
			problems = append(problems, bad)
			continue
		}
		ok = append(ok, t)
	}
	return ok, problems
}

// commandAgent runs the user's command in the task's container, traced so
// that each command it runs is a step.
func commandAgent(t model.Task, command string, passEnv []string) model.Agent {
	step := func(instruction string) model.Step {
		return model.Step{
			Name: "agent", Show: command, Argv: []string{"-c", command}, Trace: true,
			Env: []string{
				"HEADROOM_INSTRUCTION=" + instruction,
				"HEADROOM_INSTRUCTION_FILE=" + taskfile.InstructionFile,
				"HEADROOM_TASK=" + t.Name,
			},
			PassEnv: passEnv,
			Files: []model.Upload{
				{To: "/headroom", Name: "instruction.md", Content: instruction},
				{To: taskfile.AgentLogDir},
			},
		}
	}
	a := model.Agent{Name: AgentCommand, Description: "your agent: " + command}
	if len(t.Phases) == 0 {
		a.Steps = []model.Step{step(t.Instruction)}
		return a
	}
	// A multi-step task asks each step's instruction in turn.
	for _, p := range t.Phases {
		st := step(p.Instruction)
		st.Name, st.Phase = p.Name+"/agent", p.Name
		a.Steps = append(a.Steps, st)
	}
	return a
}
