package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

func newAuditCmd(tasksDir *string) *cobra.Command {
	var profile string
	cmd := &cobra.Command{
		Use:   "audit DIR...",
		Short: "List every way headroom would run these tasks differently from their own harness (exit 1 if any)",
		Long: `audit loads task directories (or directories of them) as a run would and
prints one row per difference between what headroom will run and what the
task's own harness (Harbor, terminal-bench) would run: fields it cannot
enforce, a different container profile, GPUs, a verdict reached otherwise
than its harness reaches it. A task that cannot be loaded is a row too.
Nothing is printed for a faithful task; the exit code is 0 when every task
is faithful, 1 otherwise. Below the rows, the tasks whose Dockerfile needs
BuildKit (heredocs, RUN --mount, COPY --chmod...), at its line.`,
		Example: `  headroom tasks audit ~/terminal-bench-2
  headroom tasks audit --profile hardened ~/terminal-bench-2/chroot-task`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if args = withTasksDir(args, *tasksDir); len(args) == 0 {
				return usagef("tasks audit needs one or more task directories (or --tasks-dir); usage: headroom tasks audit DIR... [flags]")
			}
			if profile != "" {
				p, err := model.ParseProfile(profile)
				if err != nil {
					return usagef("--profile: %v", err)
				}
				profile = p
			}
			c := &taskfile.Catalog{}
			for _, a := range args {
				if err := c.AddDir(a); err != nil {
					return usageError{err}
				}
			}
			w := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			rows, deviating := 0, 0
			header := func() {
				if rows == 0 {
					fmt.Fprintln(tw, "TASK\tPROFILE\tDEVIATION\tDETAIL")
				}
				rows++
			}
			for _, l := range c.Tasks {
				t := l.Task
				if profile != "" {
					t.SetProfile(profile)
				}
				devs := t.AllDeviations()
				if len(devs) > 0 {
					deviating++
				}
				for _, d := range devs {
					header()
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Profile, d.What, d.Detail)
				}
			}
			for _, p := range c.Problems {
				header()
				fmt.Fprintf(tw, "%s\t\t%s\t%v\n", "(not loaded)", "refused", p)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			listBuilds(w, c.Tasks, "needs BuildKit (the classic builder refuses this Dockerfile syntax; headroom builds it with the engine's BuildKit, as Harbor does):",
				(*model.Task).NeedsBuildKit)
			listBuilds(w, c.Tasks, "builds otherwise with the classic builder (headroom builds it with the engine's BuildKit, as Harbor does, where the task has no network or the run says --build-network; else with the classic builder on a network of its own, and the build's first line says so):",
				(*model.Task).ClassicDiffers)
			fmt.Fprintf(w, "%s loaded: %d faithful, %d with deviations; %d not loaded\n",
				model.Quantity(len(c.Tasks), "task"), len(c.Tasks)-deviating, deviating, len(c.Problems))
			if rows > 0 {
				return exitError{ExitFailure}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "", "audit under this container profile (harbor or hardened) instead of each task's default")
	return cmd
}

// noteDeviations says, before a run, which tasks will not run as their
// own harness would run them.
func noteDeviations(w io.Writer, tasks []model.Task) {
	var names []string
	for _, t := range tasks {
		// A suspected typo is warned of on its own, and its harness
		// ignores the key as headroom does: not a way it runs otherwise
		// (a new user read the two as contradicting each other).
		if slices.ContainsFunc(t.AllDeviations(), func(d model.Deviation) bool { return d.What != model.SuspectedTypo }) {
			names = append(names, t.Name)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "note: %s will run differently from their own harness (%s): `headroom tasks audit` lists how\n", model.Quantity(len(names), "task"), strings.Join(names, ", "))
	}
}

// listBuilds prints, under head, each task's builds that says names (none:
// no head either).
func listBuilds(w io.Writer, tasks []taskfile.Loaded, head string, says func(*model.Task) []string) {
	first := true
	for i := range tasks {
		for _, n := range says(&tasks[i].Task) {
			if first {
				fmt.Fprintln(w, head)
				first = false
			}
			fmt.Fprintf(w, "  %s  %s\n", tasks[i].Task.Name, n)
		}
	}
}
