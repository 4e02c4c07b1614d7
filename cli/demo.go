package cli

import (
	"fmt"

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
					t.Agents = []model.Agent{a}
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
