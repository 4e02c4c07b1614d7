package cli

import (
	"cmp"
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
				ms[i], trials[i] = printable.Value(ms[i]), printable.Value(trials[i])
			}
			if sameDir(dirs[0], dirs[1]) || ms[0].ID == ms[1].ID {
				return usagef("compare: %s and %s are the same experiment (%s); compare it with another run, e.g. one from another day or host (`headroom report --list` lists them)", args[0], args[1], ms[0].ID)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "A = %s, B = %s\n\n", ms[0].ID, ms[1].ID)
			if diffs := manifestDiffs(ms[0], ms[1]); len(diffs) > 0 {
				fmt.Fprintln(w, "Setups differ (each is a noise source of its own):")
				for _, d := range diffs {
					fmt.Fprintln(w, "  "+d)
				}
				fmt.Fprintln(w)
			} else {
				fmt.Fprintln(w, "Setups match: engine, kernel, host size, concurrency and repeats are the same.")
			}
			if specs := specDiffs(ms[0], ms[1]); len(specs) > 0 {
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
			fmt.Fprintln(tw, "ratio\tmetric\tA\tB\tB − A\t95% CI\tp by task\ttasks\t\tpooled p")
			for _, c := range model.CompareExperiments(ma, mb, opts.NoisePP) {
				fmt.Fprintf(tw, "%s\t%s\t%.0f%%\t%.0f%%\t%s\t%s\t%s\t%d\t%s\t%s\n", c.Ratio, c.Metric, 100*c.A.Mean, 100*c.B.Mean, model.PPText(c.Diff), model.PPInterval(c.CI), model.PText(c.P), c.Tasks, model.Verdict(c.Noise), model.PText(c.PooledP))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(w, "\n"+report.QuestionsLegend+" (here: over the tasks both ran)")
			return writeCompareRegimes(w, ma, mb, trials[0], trials[1])
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
func writeCompareRegimes(w io.Writer, ma, mb *model.Matrix, a, b []model.TrialResult) error {
	byRatio := func(ts []model.TrialResult) map[model.Ratio][]model.TrialResult {
		out := map[model.Ratio][]model.TrialResult{}
		for _, t := range ts {
			out[t.Ratio] = append(out[t.Ratio], t)
		}
		return out
	}
	ra, rb := byRatio(a), byRatio(b)
	fmt.Fprintln(w, "\nFailed at the limit, and what changed from A to B, paired by trial:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ratio\tfailed at the limit A\tB\tpairs\tB − A\trescued (infra → pass)\tmade easier (clean failure → pass)\tregressed\t")
	for _, r := range ma.Ratios {
		if _, ok := mb.ByRatio[r]; !ok {
			continue
		}
		s := model.SplitRegimes("A", ra[r], "B", rb[r])
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d [%.0f–%.0f%%]\t%d [%.0f–%.0f%%]\t%d [%.0f–%.0f%%]\t\n", r, ma.ByRatio[r].Memory, mb.ByRatio[r].Memory, s.Pairs, model.PPText(s.ScoreChange()),
			s.Rescued, 100*s.RescuedCI.Lo, 100*s.RescuedCI.Hi, s.Easier, 100*s.EasierCI.Lo, 100*s.EasierCI.Hi, s.Regressed, 100*s.RegressedCI.Lo, 100*s.RegressedCI.Hi)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, report.RegimesLegend)
	return err
}

// manifestDiffs lists what differs between two experiments' setups.
func manifestDiffs(a, b store.Manifest) []string {
	var out []string
	add := func(name string, x, y any) {
		if fmt.Sprint(x) != fmt.Sprint(y) {
			out = append(out, fmt.Sprintf("%-16s A %v · B %v", name, x, y))
		}
	}
	add("source", source(a), source(b))
	add("engine", a.Engine.Name()+" "+a.Engine.Version, b.Engine.Name()+" "+b.Engine.Version)
	add("cgroup", a.Engine.Detail("cgroup_version")+"/"+a.Engine.Detail("cgroup_driver"), b.Engine.Detail("cgroup_version")+"/"+b.Engine.Detail("cgroup_driver"))
	add("memory sampling", a.Engine.SampleSource, b.Engine.SampleSource)
	add("kernel", a.Host.Kernel, b.Host.Kernel)
	add("host", a.Host.Hostname, b.Host.Hostname)
	add("host CPUs", a.Host.CPUs, b.Host.CPUs)
	add("host memory", model.FormatBytes(a.Host.MemoryBytes), model.FormatBytes(b.Host.MemoryBytes))
	add("concurrency", a.Concurrency, b.Concurrency)
	add("repeats", a.Repeats, b.Repeats)
	add("seed", a.Seed, b.Seed)
	add("headroom", a.Version, b.Version)
	add("tasks/images", taskSet(a), taskSet(b))
	return out
}

// taskSet is an experiment's tasks and their images, in one order
// whatever order its plan listed them in: the same tasks listed
// otherwise are the same setup.
func taskSet(m store.Manifest) string {
	var ts []string
	for _, t := range m.Tasks {
		ts = append(ts, t.Name+"@"+t.ImageID)
	}
	slices.Sort(ts)
	return strings.Join(ts, " ")
}

// specDiffs lists, per task both experiments ran, how its spec differs:
// memory (and the 1x limit it makes), its own memory_limit, CPUs, pids
// limit and container profile.
func specDiffs(a, b store.Manifest) []string {
	inB := map[string]store.TaskEntry{}
	for _, t := range b.Tasks {
		inB[t.Name] = t
	}
	limit1x := func(r model.Resources) int64 { return cmp.Or(r.MemoryLimitBytes, r.MemoryBytes) }
	var out []string
	for _, ta := range a.Tasks {
		tb, ok := inB[ta.Name]
		if !ok {
			continue
		}
		ra, rb := ta.Resources, tb.Resources
		var d []string
		if ra.MemoryBytes != rb.MemoryBytes {
			d = append(d, fmt.Sprintf("memory A %s · B %s", model.FormatBytes(ra.MemoryBytes), model.FormatBytes(rb.MemoryBytes)))
		}
		if la, lb := limit1x(ra), limit1x(rb); la != lb && (la != ra.MemoryBytes || lb != rb.MemoryBytes) {
			d = append(d, fmt.Sprintf("1x limit A %s · B %s", model.FormatBytes(la), model.FormatBytes(lb)))
		}
		if ra.CPUs != rb.CPUs {
			d = append(d, fmt.Sprintf("cpus A %g · B %g", ra.CPUs, rb.CPUs))
		}
		if ra.PidsLimit != rb.PidsLimit {
			d = append(d, fmt.Sprintf("pids limit A %d · B %d (0: none)", ra.PidsLimit, rb.PidsLimit))
		}
		if pa, pb := cmp.Or(ta.Profile, model.ProfileHardened), cmp.Or(tb.Profile, model.ProfileHardened); pa != pb {
			d = append(d, fmt.Sprintf("profile A %s · B %s", pa, pb))
		}
		if len(d) > 0 {
			out = append(out, ta.Name+": "+strings.Join(d, ", "))
		}
	}
	return out
}

// source says where an experiment's trials came from: run here, or
// imported from another harness's jobs.
func source(m store.Manifest) string {
	if len(m.Imported) == 0 {
		return "run by headroom"
	}
	return fmt.Sprintf("imported from %s (%s; no memory recorded)", m.Imported[0].Harness, model.Quantity(len(m.Imported), "job"))
}

// sameDir says whether two paths name one directory (a symlink or a
// relative path to it included).
func sameDir(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
