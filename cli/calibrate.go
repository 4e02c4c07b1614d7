package cli

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/headroom-eval/headroom/agents"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

func newCalibrateCmd() *cobra.Command {
	var out, target, margin string
	var write bool
	var writeTo string
	cmd := &cobra.Command{
		Use:   "calibrate EXP",
		Short: "Recommend each task's guarantee and hard limit from the peaks an experiment recorded",
		Long: `calibrate reads an experiment's trials and recommends, per task · agent, the
smallest hard limit that would have kept memory failures (killed at the
limit, or stalled at it) at or below --target, plus --margin, and a
guarantee covering the median run. A task whose steps draw every size from
the trial's seed (the built-in workload) replays a repeat at every ratio,
so an uncapped run measures what its killed 1x run needed; any other task
draws its size afresh each run, and every trial is one sample of its need
(a failed one says only that its need passed its limit). Sweep with
uncapped among the ratios.

--write writes the recommendation into the task's own file, as the file's
fields mean it: a Terminal-Bench 2.0 / Harbor task.toml has one memory
field (memory_mb), which is the whole spec and so the 1x hard limit: it
gets the recommended limit; a headroom TOML gets the guarantee (memory)
and the limit (memory_limit) both. --write-to PATH writes that edited file to
PATH instead, leaving the task's own file as it was (one task at a time).`,
		Args: argsFor(1, 1, experimentArg),
		RunE: func(cmd *cobra.Command, args []string) error {
			if writeTo != "" {
				write = true
			}
			tgt, err := parsePP("target", target)
			if err != nil {
				return err
			}
			if tgt <= 0 || tgt >= 1 {
				// No count of runs shows a rate of exactly 0, and at 100% any
				// limit will do: neither has a limit to recommend.
				return usagef("--target must be more than 0 and less than 100%% of runs failing at the limit, e.g. 1%% (got %q)", target)
			}
			mg, err := parsePP("margin", margin)
			if err != nil {
				return err
			}
			_, m, trials, err := loadExperiment(args[0], out, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if len(m.Imported) > 0 {
				// Its records hold outcomes and no memory: calibrate
				// recommended 0 B (the eleventh attacker's 16).
				return usagef("calibrate: %s was imported from %s (%s), whose records hold outcomes and no memory readings; calibrate needs the peaks of trials headroom ran: `headroom run` its tasks with uncapped among the ratios, then calibrate that experiment",
					m.ID, m.Imported[0].Harness, model.Quantity(len(m.Imported), "job"))
			}
			specs := map[string]int64{}
			cpus := map[string]float64{}
			seeded := map[string]bool{}
			entries := map[string]store.TaskEntry{}
			for _, t := range m.Tasks {
				specs[t.Name] = t.Resources.MemoryBytes
				cpus[t.Name] = t.Resources.CPUs
				seeded[t.Name] = model.SeededImage(t.Image)
				entries[t.Name] = t
			}
			cals := model.Calibrate(trials, specs, seeded, tgt, mg)
			w := cmd.OutOrStdout()
			report.WriteCalibration(w, m.ID, cals, tgt, mg)
			report.WriteCPUCalibration(w, model.CalibrateCPU(trials, cpus, m.Host.CPUs, tgt, mg))
			cancelled := map[string]int{}
			for _, c := range cals {
				cancelled[c.Task] += c.Cancelled
			}
			for _, c := range cals {
				if n := cancelled[c.Task]; n > 0 {
					cancelled[c.Task] = 0
					trial := "trial is"
					if n > 1 {
						trial = "trials are"
					}
					fmt.Fprintf(w, "%s: %d cancelled %s not evidence; `%s` runs them\n", c.Task, n, trial, resumeCommand(m.ID, out))
				}
			}
			if tasks := model.CalibratedTasks(cals); writeTo != "" && len(tasks) != 1 {
				return usagef("--write-to takes one task's file; %s calibrates %d tasks (%s): use --write to write each into its own file", m.ID, len(tasks), strings.Join(tasks, ", "))
			}
			failed := 0
			var changed map[string]string
			if write {
				changed = changedSince(m)
			}
			for _, task := range model.CalibratedTasks(cals) {
				if why, ok := changed[task]; ok {
					// The peaks are the old task's: written over the new
					// one, a Dockerfile or agent changed since got a limit
					// it was never measured at (the twenty-fifth attacker's
					// 3), as a resume refuses to mix the two.
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "not written: %s: %s\n", entries[task].Source, why)
					continue
				}
				rec, why := model.TaskRecommendation(cals, task)
				if why != "" {
					fmt.Fprintf(w, "\n# %s: not written: %s\n", task, why)
					continue
				}
				if rec.Verdict == "keep" {
					continue
				}
				src := entries[task].Source
				edit, err := taskfile.EditMemory(src, entries[task].Format, rec, m.ID)
				if err == nil {
					fmt.Fprintf(w, "\n# %s (%s), from %d runs: %s\n[environment]\n%s\n", task, src, rec.Runs(), edit.What, strings.Join(edit.Lines, "\n"))
				} else {
					fmt.Fprintf(w, "\n# %s (%s), from %d runs\n[environment]\nmemory = %q\nmemory_limit = %q\n", task, src, rec.Runs(), taskfile.MemoryString(rec.GuaranteeBytes), taskfile.MemoryString(rec.LimitBytes))
				}
				if !write {
					continue
				}
				if err == nil && writeTo != "" {
					// The edited file, in the task file's own format,
					// elsewhere: the task's own file is left as it was.
					edit.Path = writeTo
				}
				if err == nil {
					err = edit.Write()
				}
				if err != nil {
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "not written: %v\n", err)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %s\n", edit.Path, edit.What)
				}
			}
			if failed > 0 {
				return fmt.Errorf("calibrate --write: %s not written (above); the others were", model.Quantity(failed, "task file"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	cmd.Flags().StringVar(&target, "target", "1%", "highest acceptable share of runs failing at the limit (killed or stalled)")
	cmd.Flags().StringVar(&margin, "margin", "10%", "headroom added on top of the measured need")
	cmd.Flags().StringVar(&writeTo, "write-to", "", "write the edited task file here instead of over the task's own (one task; same format as its file: a Harbor task.toml stays one, a headroom TOML one); implies --write")
	cmd.Flags().BoolVar(&write, "write", false, "write the recommendation into the tasks' own files as their fields mean it (Harbor memory_mb: the limit; headroom TOML: memory and memory_limit); not built-in tasks")
	return cmd
}

// changedSince says, of each task of experiment m whose files no longer
// load as the experiment ran it, how (as a resume says it): a limit
// measured on the old task is not written into the new one. A change of
// the resources alone is not one: they are what calibrate writes, and the
// peaks do not depend on them. A task that cannot be reloaded to compare
// is not written either.
func changedSince(m store.Manifest) map[string]string {
	out := map[string]string{}
	tasks, err := agents.RecordedTasks(m)
	if err != nil {
		for _, e := range m.Tasks {
			out[e.Name] = fmt.Sprintf("its task cannot be reloaded to compare with what experiment %s ran (%v)", m.ID, err)
		}
		return out
	}
	for i, e := range m.Tasks {
		if i >= len(tasks) {
			break
		}
		t := tasks[i] // loaded from where e's task came from
		if t.Name != e.Name {
			// A manifest whose source names another task's file (a copied
			// experiment, edited) would have that file rewritten.
			out[e.Name] = fmt.Sprintf("%s now defines task %s, not %s, which experiment %s ran", cmp.Or(e.SourcePath, e.Source), t.Name, e.Name, m.ID)
			continue
		}
		t.Resources = e.Resources
		var ch []string
		for _, c := range e.Changes(t) {
			if c != "resources changed" {
				ch = append(ch, c)
			}
		}
		if len(ch) > 0 {
			out[e.Name] = fmt.Sprintf("the task changed since experiment %s ran it (%s), so its peaks are not this task's: run the task as it is now (with uncapped among the ratios) and calibrate that experiment; an experiment run with --build-network, --build-memory or --build-cpus compares as a changed build", m.ID, strings.Join(ch, ", "))
		}
	}
	return out
}
