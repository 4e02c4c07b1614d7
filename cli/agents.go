package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/agents"
	"github.com/spf13/cobra"
)

// agentFlags set up a run's agents (agents.Settings) from the command line.
type agentFlags struct {
	command      string
	passEnv      []string
	timeoutScale float64
	passReward   float64
	agentsDir    string
	versions     []string
	// profile puts every task under one container profile ("": each
	// task's default).
	profile string
}

func (a *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.command, "agent-command", "", "add an agent named \"command\" to every task with a shell: this shell command runs in the container, with the instruction in $HEADROOM_INSTRUCTION (left out past Linux's 128 KiB bound on one variable) and the file $HEADROOM_INSTRUCTION_FILE (always whole)")
	fl.StringSliceVar(&a.passEnv, "pass-env", nil, "host environment variables given to the command agent (e.g. an API key) and to the tasks whose own env tables name them (\"${NAME}\"), and to no others; their values are redacted from every log, record and screen")
	fl.Float64Var(&a.timeoutScale, "timeout-scale", 1, "multiply every task's agent and verifier time limits")
	fl.Float64Var(&a.passReward, "pass-reward", 1, "reward a Harbor verifier must write to pass")
	fl.StringVar(&a.profile, "profile", "", "container profile for every task: harbor (the engine's default capabilities, no pids limit: what Harbor's Docker environment runs) or hardened (capabilities dropped, pids limit, no-new-privileges); default harbor for task directories, hardened for headroom's own and built-in tasks")
	fl.StringVar(&a.agentsDir, "agents-dir", "", "also load installed-agent definitions (*.toml) from this directory (headroom agents list shows them)")
	fl.StringSliceVar(&a.versions, "agent-version", nil, "pin an installed agent's version: NAME=VERSION (repeatable)")
}

// settings are the flags as agents.Settings; installed names the
// installed-agent definitions to add to the tasks.
func (a *agentFlags) settings(installed []string) (agents.Settings, error) {
	s := agents.Settings{Command: a.command, PassEnv: a.passEnv, TimeoutScale: a.timeoutScale, PassReward: a.passReward,
		Installed: installed, AgentsDir: a.agentsDir, Profile: a.profile}
	for _, v := range a.versions {
		name, pin, ok := strings.Cut(v, "=")
		if !ok || name == "" || pin == "" {
			return s, usagef("--agent-version %q: give NAME=VERSION", v)
		}
		if s.Versions == nil {
			s.Versions = map[string]string{}
		}
		s.Versions[name] = pin
	}
	return s, nil
}

// library is the installed-agent definitions the flags make available.
func (a *agentFlags) library() (*agents.Library, error) {
	lib, err := agents.Load(a.agentsDir)
	if err != nil {
		return nil, usageError{err}
	}
	return lib, nil
}

// installedIn are the names among wanted that are installed-agent
// definitions rather than agents of the tasks themselves.
func installedIn(lib *agents.Library, wanted []string) []string {
	var out []string
	for _, n := range wanted {
		if _, ok := lib.Find(n); ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// asAgentsUsage marks the agents package's input errors as usage errors.
func asAgentsUsage(err error) error {
	var ie agents.InputError
	if errors.As(err, &ie) {
		return usageError{ie.Err}
	}
	return err
}

func newAgentsCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{Use: "agents", Short: "Installed-agent definitions: the agent CLIs headroom can install and run in a task's container"}
	cmd.PersistentFlags().StringVar(&dir, "agents-dir", "", "also load definitions (*.toml) from this directory")
	cmd.AddCommand(&cobra.Command{
		Use: "list", Short: "List the definitions (built in and --agents-dir)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lib, err := agents.Load(dir)
			if err != nil {
				return usageError{err}
			}
			w := cmd.OutOrStdout()
			for _, d := range lib.Defs {
				pin := d.Version
				if pin == "" {
					pin = "unpinned"
				}
				fmt.Fprintf(w, "%-12s %-10s %s\n", d.Name, pin, d.Description)
			}
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use: "show NAME", Short: "Show a definition and its install and run steps rendered for an example task", Args: argsFor(1, 1, "an agent definition's name (`headroom agents list` lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := agents.Load(dir)
			if err != nil {
				return usageError{err}
			}
			d, ok := lib.Find(args[0])
			if !ok {
				return usagef("no agent definition named %s (`headroom agents list`)", args[0])
			}
			text, err := agents.Describe(d)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), text)
			return nil
		},
	})
	return cmd
}
