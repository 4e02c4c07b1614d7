package cli

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/ui"
	"github.com/spf13/cobra"
)

// The OOM showcase: the heavy install task at 1x, 3x and uncapped side by
// side, repeating, so a live demo needs no keystrokes.
const (
	demoTask  = "builtin/bn-fit-modify"
	demoAgent = "heavy"
)

func newDemoCmd() *cobra.Command {
	cf := &consoleFlags{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Open the console already running the OOM showcase (heavy install at 1x, 3x, uncapped, repeating)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Side by side: one slot per ratio unless asked otherwise.
			concurrency, repeats := 3, 50
			if cmd.Flags().Changed("concurrency") {
				concurrency = cf.concurrency
			}
			if cmd.Flags().Changed("repeats") {
				repeats = cf.repeats
			}
			return runConsole(cmd, cf, func(tasks []model.Task) (*ui.LaunchSpec, error) {
				for _, t := range tasks {
					if t.Name != demoTask {
						continue
					}
					a, ok := t.Agent(demoAgent)
					if !ok {
						break
					}
					t.Agents = []model.Agent{steadyAgent(a)}
					return &ui.LaunchSpec{Tasks: []model.Task{t}, Ratios: []model.Ratio{{K: 1}, {K: 3}, model.Uncapped},
						Repeats: repeats, Concurrency: concurrency, Seed: cf.seed, Label: "demo"}, nil
				}
				return nil, fmt.Errorf("the demo task %s · %s is missing from the catalog (a headroom bug)", demoTask, demoAgent)
			})
		},
	}
	cf.register(cmd)
	return cmd
}

// steadyAgent is the showcase's agent without its own chance of failing
// (its built-in steps' fail_chance): on stage, what changes between the
// columns is the machine alone, so 3x and uncapped pass beside the kill
// at 1x every time. A step that is not the built-in workload's is kept.
func steadyAgent(a model.Agent) model.Agent {
	steps := slices.Clone(a.Steps)
	for i, st := range steps {
		j := slices.Index(st.Argv, "--profile")
		if j < 0 || j+1 >= len(st.Argv) {
			continue
		}
		var profile map[string]any
		if json.Unmarshal([]byte(st.Argv[j+1]), &profile) != nil {
			continue
		}
		delete(profile, "fail_chance")
		b, err := json.Marshal(profile)
		if err != nil {
			continue
		}
		st.Argv = slices.Clone(st.Argv)
		st.Argv[j+1] = string(b)
		steps[i] = st
	}
	a.Steps = steps
	return a
}
