package cli

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

func newCalibrateCmd() *cobra.Command {
	var out, target, margin string
	var write bool
	cmd := &cobra.Command{
		Use:   "calibrate EXP",
		Short: "Recommend each task's guarantee and hard limit from the peaks an experiment recorded",
		Long: `calibrate reads an experiment's trials and recommends, per task, the
smallest hard limit that would have kept OOM kills at or below --target,
plus --margin, and a guarantee covering the median run. Repeats share their
seed across ratios, so a run killed at 1x is measured by the same
trajectory's uncapped run: sweep with uncapped among the ratios.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tgt, err := parsePP("target", target)
			if err != nil {
				return err
			}
			mg, err := parsePP("margin", margin)
			if err != nil {
				return err
			}
			_, m, trials, err := loadExperiment(args[0], out, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			specs := map[string]int64{}
			sources := map[string]string{}
			for _, t := range m.Tasks {
				specs[t.Name] = t.Resources.MemoryBytes
				sources[t.Name] = t.Source
			}
			cals := model.Calibrate(trials, specs, tgt, mg)
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Calibration of %s: target kill rate %.0f%%, margin %.0f%%\n\n", m.ID, 100*tgt, 100*mg)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "task\tspec\truns\tneed p50\tneed max\tkills by ratio\tverdict\tguarantee\tlimit\t")
			for _, c := range cals {
				var kills []string
				for _, k := range c.Kills {
					kills = append(kills, fmt.Sprintf("%s %d/%d", k.Ratio, k.Killed, k.Trials))
				}
				p50, pmax := "-", "-"
				if n := len(c.NeedBytes); n > 0 {
					p50, pmax = model.FormatBytes(c.NeedBytes[(n-1)/2]), model.FormatBytes(c.NeedBytes[n-1])
				}
				runs := fmt.Sprint(len(c.NeedBytes))
				if c.Censored > 0 {
					runs += fmt.Sprintf(" (+%d killed everywhere, need > %s)", c.Censored, model.FormatBytes(c.CensoredAboveBytes))
				}
				g, l := "-", "-"
				if c.Verdict != "unknown" {
					g, l = model.FormatBytes(c.GuaranteeBytes), fmt.Sprintf("%s (%.2gx)", model.FormatBytes(c.LimitBytes), c.LimitRatio())
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Task, model.FormatBytes(c.SpecBytes), runs, p50, pmax, strings.Join(kills, ", "), c.Verdict, g, l)
			}
			tw.Flush()
			fmt.Fprintln(w, "\nkeep: the spec already covers every run · raise: use the recommendation · unknown: killed at every ratio tried; sweep again with uncapped")
			for _, c := range cals {
				if c.Verdict != "raise" {
					continue
				}
				fmt.Fprintf(w, "\n# %s (%s)\n[environment]\nmemory = %q  # guarantee; recommended hard limit %s (%.2gx), from %d runs\n",
					c.Task, sources[c.Task], memString(c.GuaranteeBytes), memString(c.LimitBytes), c.LimitRatio(), len(c.NeedBytes))
				if write {
					if err := writeMemory(sources[c.Task], c, m.ID); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "not written: %v\n", err)
					} else {
						fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", sources[c.Task])
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	cmd.Flags().StringVar(&target, "target", "1%", "highest acceptable OOM kill rate")
	cmd.Flags().StringVar(&margin, "margin", "10%", "headroom added on top of the measured need")
	cmd.Flags().BoolVar(&write, "write", false, "write the recommended guarantee into the tasks' own files (not built-in tasks)")
	return cmd
}

func memString(b int64) string { return fmt.Sprintf("%dM", (b+model.MiB-1)/model.MiB) }

var memoryLine = regexp.MustCompile(`(?m)^(\s*)(memory|memory_mb)\s*=.*$`)

// writeMemory replaces the [environment] memory line of a user task file,
// keeping everything else as it is.
func writeMemory(path string, c model.Calibration, exp string) error {
	if path == "" || strings.HasPrefix(path, "builtin:") {
		return fmt.Errorf("%s is a built-in task; copy its file into a --tasks-dir to change it", c.Task)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("memory = %q  # headroom calibrate %s: recommended hard limit %s (%.2gx)", memString(c.GuaranteeBytes), exp, memString(c.LimitBytes), c.LimitRatio())
	var out string
	if loc := memoryLine.FindIndex(data); loc != nil {
		out = string(data[:loc[0]]) + line + string(data[loc[1]:])
	} else if i := strings.Index(string(data), "[environment]"); i >= 0 {
		j := i + len("[environment]")
		out = string(data[:j]) + "\n" + line + string(data[j:])
	} else {
		out = string(data) + "\n[environment]\n" + line + "\n"
	}
	if _, err := taskfile.Parse(path, []byte(out)); err != nil {
		return fmt.Errorf("the edited file would not load (%v); left unchanged", err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
