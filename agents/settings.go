package agents

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
)

// CommandAgent is the agent a user supplies as a command template.
const CommandAgent = "command"

// InputError is a problem with what the user asked for (a usage error).
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

func inputf(format string, args ...any) error { return InputError{fmt.Errorf(format, args...)} }

// Settings are how a run's agents are set up: a command agent, installed
// agents, time limit scale, the reward to pass. The manifest records them
// (store.AgentSettings, names only) so that a resume sets them up again.
type Settings struct {
	Command      string
	PassEnv      []string
	TimeoutScale float64
	PassReward   float64
	// Installed are installed-agent definitions added to every task with
	// a shell (not the built-in image); AgentsDir adds definitions to the
	// built-in ones; Versions pins a definition's version (name → pin).
	Installed []string
	AgentsDir string
	Versions  map[string]string
	// Profile puts every task under one container profile ("": each
	// task's default).
	Profile string
}

// DefaultSettings change nothing.
func DefaultSettings() Settings { return Settings{TimeoutScale: 1, PassReward: 1} }

// Record is what the manifest records of the settings (names, no values).
func (a Settings) Record() *store.AgentSettings {
	if a.Command == "" && len(a.PassEnv) == 0 && a.TimeoutScale == 1 && a.PassReward == 1 && len(a.Installed) == 0 && a.Profile == "" {
		return nil
	}
	return &store.AgentSettings{Command: a.Command, PassEnv: a.PassEnv, TimeoutScale: a.TimeoutScale, PassReward: a.PassReward,
		Installed: a.Installed, AgentsDir: a.AgentsDir, Versions: a.Versions, Profile: a.Profile}
}

// FromRecord are the settings a manifest recorded.
func FromRecord(s *store.AgentSettings) Settings {
	if s == nil {
		return DefaultSettings()
	}
	return Settings{Command: s.Command, PassEnv: s.PassEnv, TimeoutScale: s.TimeoutScale, PassReward: s.PassReward,
		Installed: s.Installed, AgentsDir: s.AgentsDir, Versions: s.Versions, Profile: s.Profile}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckPassReward says what is wrong with a --pass-reward: a reward a
// verifier can write and a manifest can hold, a finite number (NaN and
// ±Inf are neither: the manifest's JSON refused NaN only after the
// experiment's directory was made).
func CheckPassReward(r float64) error {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Errorf("--pass-reward must be a finite number, such as 1 or 0.5 (got %v)", r)
	}
	return nil
}

// Apply adds the command agent and the installed agents, scales time
// limits and sets the reward threshold; it returns the secrets the runner
// passes and redacts.
func (a Settings) Apply(tasks []model.Task) ([]model.Task, map[string]string, error) {
	if !(a.TimeoutScale > 0 && a.TimeoutScale <= 100) { // NaN too
		return nil, nil, inputf("--timeout-scale must be more than 0 and at most 100 (got %v)", a.TimeoutScale)
	}
	if err := CheckPassReward(a.PassReward); err != nil {
		return nil, nil, InputError{err}
	}
	if a.Profile != "" {
		p, err := model.ParseProfile(a.Profile)
		if err != nil {
			return nil, nil, inputf("--profile: %v", err)
		}
		a.Profile = p
	}
	var defs []Definition
	if len(a.Installed) > 0 {
		lib, err := Load(a.AgentsDir)
		if err != nil {
			return nil, nil, InputError{err}
		}
		for _, n := range a.Installed {
			d, ok := lib.Find(n)
			if !ok {
				return nil, nil, inputf("no agent definition named %s (`headroom agents list` lists them)", n)
			}
			defs = append(defs, d)
		}
	}
	secrets := map[string]string{}
	for _, n := range a.PassEnv {
		if !envName.MatchString(n) {
			return nil, nil, inputf("--pass-env %q is not an environment variable name", n)
		}
		v, set, err := HostSecret(n)
		if !set {
			return nil, nil, inputf("--pass-env %s: %s is not set in headroom's environment", n, n)
		}
		if err != nil {
			return nil, nil, inputf("--pass-env %s: %v", n, err)
		}
		secrets[n] = v
	}
	out := make([]model.Task, len(tasks))
	for i, t := range tasks {
		byScale := func(d time.Duration) time.Duration { return scale(d, a.TimeoutScale) }
		if what, s := taskfile.TooShortLimit(t, byScale); what != "" {
			// Shorter than a step takes to start: 1e-12 was taken, and
			// the engine's own calls cut by it read as the engine gone
			// (the twelfth attacker's 8).
			return nil, nil, inputf("--timeout-scale %v makes task %s's %s time limit %v, shorter than any step takes to start: give a scale that leaves at least %v", a.TimeoutScale, t.Name, what, s, taskfile.MinTimeout)
		}
		t.AgentTimeout, t.VerifierTimeout = byScale(t.AgentTimeout), byScale(t.VerifierTimeout)
		if a.TimeoutScale != 1 {
			t.TimeoutScale = a.TimeoutScale
		}
		if a.Profile != "" {
			t.SetProfile(a.Profile)
		}
		if t.Verdict.Reward != nil {
			r := *t.Verdict.Reward
			r.Pass = a.PassReward
			t.Verdict.Reward = &r
		}
		if t.Image != taskfile.BuiltinImage {
			add := func(ag model.Agent, flag string) error {
				if _, ok := t.Agent(ag.Name); ok {
					return inputf("task %s already has an agent named %q; %s would shadow it", t.Name, ag.Name, flag)
				}
				t.Agents = append(slices.Clone(t.Agents), ag)
				return nil
			}
			if a.Command != "" {
				if err := add(commandAgent(t, a.Command, a.PassEnv), "--agent-command"); err != nil {
					return nil, nil, err
				}
			}
			for _, d := range defs {
				ag, err := Render(d, t, a.Versions[d.Name])
				if err != nil {
					return nil, nil, InputError{err}
				}
				ag.Timeout = scale(ag.Timeout, a.TimeoutScale)
				ag.InstallTimeout = scale(ag.InstallTimeout, a.TimeoutScale)
				if err := add(ag, "the installed agent"); err != nil {
					return nil, nil, err
				}
			}
		}
		out[i] = t
	}
	return out, secrets, nil
}

func scale(d time.Duration, k float64) time.Duration { return time.Duration(float64(d) * k) }

// HostSecret reads a passed-through variable from headroom's environment:
// set says whether it has a value at all; a value too short to redact
// from output is an error.
func HostSecret(name string) (value string, set bool, err error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return "", false, nil
	}
	if err := model.CheckSecret(v); err != nil {
		return "", true, err
	}
	return v, true, nil
}

// Runnable lists the definitions whose pass-through variables are all set
// in headroom's environment (the console offers these), plus every one
// from dir (the user's own; a missing key is then reported, named).
func Runnable(lib *Library) []string {
	var out []string
	for _, d := range lib.Defs {
		ok := true
		for _, e := range d.PassEnv {
			_, host := model.PassEnvNames(e)
			if _, set, err := HostSecret(host); !set || err != nil {
				ok = false
			}
		}
		if ok || !IsBuiltin(d) {
			out = append(out, d.Name)
		}
	}
	return out
}

// IsBuiltin says whether the definition ships in the binary.
func IsBuiltin(d Definition) bool { return len(d.Source) > 8 && d.Source[:8] == "builtin:" }

// TaskSecrets reads from headroom's environment the host variables that
// tasks and their agents pass through (Harbor's `KEY = "${KEY}"` in an env
// table, an installed agent's API key). A task whose variable is unset or
// too short to redact gets an error naming it; the others are unaffected.
//
// A variable a task's own files name (its env tables' "${NAME}", its
// oracle's [solution.env]) is read only if allowed names it (--pass-env):
// a task is not the user, and could name any variable of headroom's
// environment (a token, a cloud key), and what reaches the container the
// task may print in a form no redaction catches. Without it, a template
// with a default gets its default and one without leaves the task out,
// saying how to allow it. An agent's variables (the command agent's
// --pass-env, an installed agent's pass_env) are the user's choice.
func TaskSecrets(tasks []model.Task, secrets map[string]string, allowed []string) (ok []model.Task, problems []error) {
	for _, t := range tasks {
		type wanted struct {
			entry, where string
			task         bool // named by the task's files, not by an agent the user chose
		}
		var entries []wanted
		add := func(list []string, where string, task bool) {
			for _, e := range list {
				entries = append(entries, wanted{e, where, task})
			}
		}
		add(t.PassEnv, "its environment", true)
		add(t.Verifier.PassEnv, "its verifier", true)
		for _, p := range t.Phases {
			add(p.Verifier.PassEnv, "step "+p.Name+"'s verifier", true)
		}
		for _, a := range t.Agents {
			own := a.Name == taskfile.AgentOracle || a.Name == taskfile.AgentNop
			for _, st := range append(slices.Clone(a.Install), a.Steps...) {
				add(st.PassEnv, "agent "+a.Name, own)
			}
		}
		var bad error
		for _, w := range entries {
			name, host, _, hasDefault := model.PassEnvDefault(w.entry)
			if w.task && !slices.Contains(allowed, host) {
				if hasDefault {
					continue // the default stands in; the host's value is not read
				}
				bad = fmt.Errorf("task %s reads %s from headroom's environment into its container (%s, as %s): a task's own files get a host variable only when you name it; add --pass-env %s if you trust the task with its value, or leave the task out", t.Name, host, w.where, name, host)
				break
			}
			if _, done := secrets[host]; done {
				continue
			}
			v, set, err := HostSecret(host)
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
// that each command it runs is a step; a multi-step task asks each step's
// instruction in turn.
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
	a := model.Agent{Name: CommandAgent, Description: "your agent: " + command}
	a.Steps = perPhase(t, step)
	return a
}

// perPhase is one agent step for the task's instruction, or for a
// multi-step task one per phase, with that phase's instruction.
func perPhase(t model.Task, step func(instruction string) model.Step) []model.Step {
	if len(t.Phases) == 0 {
		return []model.Step{step(t.Instruction)}
	}
	var out []model.Step
	for _, p := range t.Phases {
		st := step(p.Instruction)
		st.Name, st.Phase = p.Name+"/agent", p.Name
		out = append(out, st)
	}
	return out
}
