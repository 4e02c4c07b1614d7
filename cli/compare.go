package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/store"
	"github.com/spf13/cobra"
)

func newCompareCmd() *cobra.Command {
	var out string
	var sf statsFlags
	cmd := &cobra.Command{
		Use:   "compare EXP_A EXP_B",
		Short: "Compare two experiments (other day, other host) paired by task and ratio, and list how their setups differ",
		Args:  argsFor(2, 2, "two experiments, A and B: each an id or a directory (`headroom report --list` lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := sf.options()
			if err != nil {
				return err
			}
			var ms [2]store.Manifest
			var trials [2][]model.TrialResult
			var dirs [2]string
			for i, a := range args {
				if dirs[i], ms[i], trials[i], err = loadExperiment(a, out, cmd.ErrOrStderr()); err != nil {
					return err
				}
				ms[i], trials[i] = columnNames(printable.Value(ms[i]), printable.Value(trials[i]))
			}
			if sameDir(dirs[0], dirs[1]) || ms[0].ID == ms[1].ID {
				return usagef("compare: %s and %s are the same experiment (%s); compare it with another run, e.g. one from another day or host (`headroom report --list` lists them)", args[0], args[1], ms[0].ID)
			}
			if why := nothingShared(trials[0], trials[1]); why != "" {
				// Empty tables and exit 0 said nothing was paired only
				// by their emptiness (a new user's and the twenty-ninth
				// attacker's).
				return fmt.Errorf("compare: %s and %s %s: nothing to pair; compare experiments that ran the same tasks at the same ratios", ms[0].ID, ms[1].ID, why)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "A = %s, B = %s\n\n", ms[0].ID, ms[1].ID)
			// The host's load is a setup of its own: two identical sweeps
			// at load 35 and 18 differed by +80 pp with only the seed named.
			loads := [2]model.HostLoadSummary{model.SummarizeHostLoad(trials[0]), model.SummarizeHostLoad(trials[1])}
			diffs := store.SetupDiffs(ms[0], ms[1])
			if why, ok := model.HostLoadsDiffer(loads[0], loads[1]); ok {
				diffs = append(diffs, fmt.Sprintf("%-16s %s", "host load", why))
			}
			if len(diffs) > 0 {
				fmt.Fprintln(w, "Setups differ (each is a noise source of its own):")
				for _, d := range diffs {
					fmt.Fprintln(w, "  "+d)
				}
				fmt.Fprintln(w)
			} else {
				fmt.Fprintln(w, "Setups match: engine, kernel, host size, host load, concurrency, repeats, the tasks' definitions, their grading (pass reward, time limits) and how the trials ran are the same.")
			}
			fmt.Fprintf(w, "Host load (median of the trials' 1-minute load at start and end; their CPU wait): A %s · B %s\n\n", loads[0], loads[1])
			if specs := store.SpecDiffs(ms[0], ms[1]); len(specs) > 0 {
				// A ratio is a multiple of the task's spec: with the
				// spec changed, "1x" in A and B are different limits.
				fmt.Fprintln(w, "Task specs differ, so the same ratio is a different limit in A and B (a row below compares those limits, not one):")
				for _, d := range specs {
					fmt.Fprintln(w, "  "+d)
				}
				fmt.Fprintln(w)
			}
			ma := model.NewMatrix(ms[0].Ratios, trials[0])
			mb := model.NewMatrix(ms[1].Ratios, trials[1])
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ratio\tmetric\tA\tB\tB − A\t95% CI\tp by task\ttasks\tverdict\tpooled p")
			for _, c := range model.CompareExperiments(ma, mb, opts.NoisePP) {
				fmt.Fprintf(tw, "%s\t%s\t%.0f%%\t%.0f%%\t%s\t%s\t%s\t%d\t%s\t%s\n", c.Ratio, c.Metric, 100*c.A.Mean, 100*c.B.Mean, model.PPText(c.Diff), model.PPInterval(c.CI), model.PText(c.P), c.Tasks, c.Label, model.PText(c.PooledP))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(w, "\n"+report.QuestionsLegend+" (here: over the tasks both ran)")
			return writeCompareRegimes(w, ma, mb, trials[0], trials[1], store.PairedReplays(ms[0], ms[1]))
		},
	}
	cmd.Flags().StringVar(&out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	sf.register(cmd)
	return cmd
}

// writeCompareRegimes writes, per ratio both ran, each experiment's
// failures at the limit and the change from A to B split into trials
// rescued from an infra failure and trials made easier (paired by task,
// agent and repeat: the same split the report gives between ratios).
func writeCompareRegimes(w io.Writer, ma, mb *model.Matrix, a, b []model.TrialResult, replays map[string]bool) error {
	// Over the task · agent rows both ran, as the table above: A's two
	// rows against B's fourteen read 0 pp where the shared rows moved
	// -25 pp (a new user's).
	a, b = sharedRows(a, b), sharedRows(b, a)
	ma, mb = model.NewMatrix(ma.Ratios, a), model.NewMatrix(mb.Ratios, b)
	byRatio := func(ts []model.TrialResult) map[model.Ratio][]model.TrialResult {
		out := map[model.Ratio][]model.TrialResult{}
		for _, t := range ts {
			out[t.Ratio] = append(out[t.Ratio], t)
		}
		return out
	}
	ra, rb := byRatio(a), byRatio(b)
	fmt.Fprintln(w, "\nFailed at the limit, and what changed from A to B, over the task · agent rows both ran, paired by trial where trials replay (seeded, one seed), else by rate:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ratio\tfailed at the limit A\tB\tpairs\tsuccess B − A\trescued (infra → pass)\tmade easier (clean failure → pass)\tregressed\t")
	for _, r := range ma.Ratios {
		if _, ok := mb.ByRatio[r]; !ok {
			continue
		}
		s := model.SplitRegimes("A", ra[r], "B", rb[r], replays)
		if s.Pairs > 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d [%.0f–%.0f%%]\t%d [%.0f–%.0f%%]\t%d [%.0f–%.0f%%]\t\n", r, ma.ByRatio[r].Memory, mb.ByRatio[r].Memory, s.Pairs, model.PPText(s.PairedChange()),
				s.Rescued, 100*s.RescuedCI.Lo, 100*s.RescuedCI.Hi, s.Easier, 100*s.EasierCI.Lo, 100*s.EasierCI.Hi, s.Regressed, 100*s.RegressedCI.Lo, 100*s.RegressedCI.Hi)
		}
		if u := s.Unpaired; u != nil {
			fmt.Fprintf(tw, "%s unpaired\t%s\t%s\t%d · %d runs\t%s\t%d/%d → %d/%d failed\t%d/%d → %d/%d failed\t-\t\n", r, ma.ByRatio[r].Memory, mb.ByRatio[r].Memory, u.From.Runs, u.To.Runs, model.PPText(u.Change()),
				u.From.Machine, u.From.Runs, u.To.Machine, u.To.Runs, u.From.Clean, u.From.Runs, u.To.Clean, u.To.Runs)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A pass after a kill is no failure at the limit, and the table
	// read 0/3 where every trial of A was OOM-killed (a new user's).
	var killed []string
	for _, r := range ma.Ratios {
		ba, okA := ma.ByRatio[r]
		bb, okB := mb.ByRatio[r]
		if okA && okB && (ba.AfterOOM > 0 || bb.AfterOOM > 0) {
			killed = append(killed, fmt.Sprintf("%s A %d/%d, B %d/%d", r, ba.AfterOOM, ba.Counted, bb.AfterOOM, bb.Counted))
		}
	}
	if killed != nil {
		fmt.Fprintf(w, "Passed after an OOM kill at the limit (a process killed, the task passed all the same: passes above, not failures): %s\n", strings.Join(killed, "; "))
	}
	_, err := fmt.Fprintln(w, report.RegimesLegend)
	return err
}

// nothingShared says why two experiments' trials pair nowhere ("" when
// some task · agent row ran at some ratio in both).
func nothingShared(a, b []model.TrialResult) string {
	type cell struct {
		row   model.RowKey
		ratio string
	}
	rows, ratios, cells := map[model.RowKey]bool{}, map[string]bool{}, map[cell]bool{}
	for _, t := range a {
		row := model.RowKey{Task: t.Task, Agent: t.Agent}
		rows[row], ratios[t.Ratio.String()], cells[cell{row, t.Ratio.String()}] = true, true, true
	}
	var bRows, bRatios []string
	sharedRow, sharedRatio := false, false
	for _, t := range b {
		row := model.RowKey{Task: t.Task, Agent: t.Agent}
		if cells[cell{row, t.Ratio.String()}] {
			return ""
		}
		sharedRow = sharedRow || rows[row]
		sharedRatio = sharedRatio || ratios[t.Ratio.String()]
		if !slices.Contains(bRows, row.Task+" · "+row.Agent) {
			bRows = append(bRows, row.Task+" · "+row.Agent)
		}
		if !slices.Contains(bRatios, t.Ratio.String()) {
			bRatios = append(bRatios, t.Ratio.String())
		}
	}
	var aRows, aRatios []string
	for r := range rows {
		aRows = append(aRows, r.Task+" · "+r.Agent)
	}
	for r := range ratios {
		aRatios = append(aRatios, r)
	}
	slices.Sort(aRows)
	slices.Sort(aRatios)
	slices.Sort(bRows)
	slices.Sort(bRatios)
	switch {
	case !sharedRow:
		return fmt.Sprintf("ran no task · agent row in common (A: %s; B: %s)", strings.Join(aRows, ", "), strings.Join(bRows, ", "))
	case !sharedRatio:
		return fmt.Sprintf("ran no ratio in common (A: %s; B: %s)", strings.Join(aRatios, ", "), strings.Join(bRatios, ", "))
	}
	return "ran no task · agent row at a ratio the other ran it at"
}

// sharedRows are the trials of ts whose task · agent row other ran too.
func sharedRows(ts, other []model.TrialResult) []model.TrialResult {
	in := map[model.RowKey]bool{}
	for _, t := range other {
		in[model.RowKey{Task: t.Task, Agent: t.Agent}] = true
	}
	var out []model.TrialResult
	for _, t := range ts {
		if in[model.RowKey{Task: t.Task, Agent: t.Agent}] {
			out = append(out, t)
		}
	}
	return out
}

// sameDir says whether two paths name one directory (a symlink or a
// relative path to it included).
func sameDir(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
