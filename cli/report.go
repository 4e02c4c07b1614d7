package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/store"
	"github.com/spf13/cobra"
)

// statsFlags choose the comparisons a report makes.
type statsFlags struct {
	baseline, noise, detect string
}

func (s *statsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.baseline, "baseline", "1x", "column every other is compared with: a ratio, or a knob's column (\"1x time=2x\") its knob's other columns are compared with")
	cmd.Flags().StringVar(&s.noise, "noise", "3pp", "a difference whose whole 95% interval lies within ±this is labelled noise; real needs an interval that excludes 0 and a difference at least this; else unsure")
	cmd.Flags().StringVar(&s.detect, "detect", "3pp", "difference the power line asks about")
}

// parsePP reads "3pp", "3%", "3" (points) or "0.03" (a fraction) as a rate.
func parsePP(flag, v string) (float64, error) {
	x, err := model.ParsePP(v)
	if err != nil {
		return 0, usagef("--%s must be percentage points like 3pp or 3%% (got %q)", flag, v)
	}
	return x, nil
}

func (s *statsFlags) options() (report.Options, error) {
	o := report.DefaultOptions()
	var err error
	if o.Baseline, err = model.ParseColumn(s.baseline); err != nil {
		return o, usagef("--baseline: %v", err)
	}
	if o.NoisePP, err = parsePP("noise", s.noise); err != nil {
		return o, err
	}
	if o.DetectPP, err = parsePP("detect", s.detect); err != nil {
		return o, err
	}
	return o, nil
}

// findExperiment resolves EXP: a directory, or an id under the store root.
func findExperiment(arg, root string) (string, error) {
	for _, dir := range []string{arg, filepath.Join(root, arg)} {
		if _, err := os.Stat(filepath.Join(dir, store.ManifestFile)); err == nil {
			// Cleaned: "exp/" (a shell's completion) made the printed
			// resume line's --out the experiment itself (the twenty-fifth
			// attacker's 5).
			return filepath.Clean(dir), nil
		}
	}
	if _, err := os.Stat(arg); err == nil {
		return "", usagef("%s is not an experiment directory (no %s in it)", arg, store.ManifestFile)
	}
	return "", usagef("experiment %q not found: give its directory or an id under %s (`headroom report --list`); a run given --out DIR keeps its experiments there: give the same --out", arg, root)
}

// loadExperiment resolves EXP (a directory or an id under root) and reads
// its manifest and trials' records, without their steps' output
// (store.ReadTrialsBrief): calibrate and compare.
func loadExperiment(arg, root string, stderr io.Writer) (string, store.Manifest, []model.TrialResult, error) {
	dir, err := findExperiment(arg, root)
	if err != nil {
		return "", store.Manifest{}, nil, err
	}
	m, trials, _, err := readExperimentWith(dir, stderr, store.ReadTrialsBriefLines)
	return dir, m, trials, err
}

// readExperiment reads an experiment's manifest and trials as their
// summary rows have them (store.Summarize: what every report section
// reads); records copies the trials' records as written, in the same
// order, for the JSON report (report.WithRecords), one at a time.
func readExperiment(dir string, stderr io.Writer) (m store.Manifest, trials []model.TrialResult, records func(each func([]byte) error) error, err error) {
	return readExperimentWith(dir, stderr, store.ReadTrialsSealed)
}

// trialsReader is how readExperimentWith reads the trials.
type trialsReader func(dir string, check func(model.TrialResult) error) ([]model.TrialResult, []store.TrialLine, bool, error)

func readExperimentWith(dir string, stderr io.Writer, read trialsReader) (m store.Manifest, trials []model.TrialResult, records func(each func([]byte) error) error, err error) {
	m, err = store.ReadManifest(dir)
	if err != nil {
		return m, nil, nil, usageError{fmt.Errorf("read experiment %s: %w", dir, err)}
	}
	// A record that is not this experiment's (pasted from another, a
	// ratio or a time edited by hand) is refused, naming its line: a
	// report over it would count a trial that did not run as its column
	// says (skipping it instead would hide the edit and change the rates).
	// A report is what gets published: it reads the summary beside the
	// records only when every row is sealed to its record's bytes
	// (store.ReadTrialsSealed: trials.jsonl read once, nothing decoded),
	// so a hand edit of a record or of a row is seen, and the records
	// themselves are read then; the check runs on every trial either way.
	trials, lines, torn, err := read(dir, store.CheckRecord(m))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return m, nil, nil, usageError{err}
	}
	if torn {
		fmt.Fprintf(stderr, "warning: %s ends in a torn line (a crash mid-write); it was skipped\n", filepath.Join(dir, store.TrialsFile))
	}
	if missing := missingRecords(m, trials, dir); missing != "" {
		fmt.Fprintln(stderr, "warning: "+missing)
	}
	records = func(each func([]byte) error) error { return store.CopyTrialLines(dir, lines, each) }
	return m, trials, records, nil
}

// missingRecords says how many of the manifest's planned trials have
// no record (the sweep stopped, or records were cut from trials.jsonl),
// and what runs them; empty when every one has.
func missingRecords(m store.Manifest, trials []model.TrialResult, dir string) string {
	have := map[string]bool{}
	for _, t := range trials {
		have[t.ID] = true
	}
	if m.Trials <= len(have) {
		return ""
	}
	n := m.Trials - len(have)
	why := "the sweep did not finish"
	if m.Status == "finished" {
		why = "the sweep finished, so records were lost from " + store.TrialsFile
	}
	return fmt.Sprintf("%d of the %d planned %s %s no record (experiment %s, %s; %s): every rate here is of the %d recorded; `headroom run --resume %s` runs the rest",
		n, m.Trials, model.Noun(m.Trials, "trial"), map[bool]string{true: "has", false: "have"}[n == 1], m.ID, m.Status, why, len(have), dir)
}

func newReportCmd() *cobra.Command {
	var sf statsFlags
	var format, out, plot string
	var plotTrials []string
	var list bool
	cmd := &cobra.Command{
		Use:   "report [EXP]",
		Short: "Print an experiment's matrix, intervals, paired comparisons and power",
		Example: `  headroom report 20261129-184423-46d0
  headroom report ./exp --format markdown --baseline 1x --noise 3pp --detect 2pp
  headroom report EXP --plot shape.png`,
		Args: argsFor(0, 1, "at most one experiment: its id or its directory (none: the store's only one, or a list of them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if plot != "" {
				if err := report.CheckPlotFile(plot); err != nil {
					return usagef("--plot: %v", err)
				}
			}
			if !slices.Contains(report.Formats, format) {
				return usagef("--format must be one of %s (got %q)", strings.Join(report.Formats, ", "), format)
			}
			if list {
				return listExperiments(cmd, out)
			}
			if len(args) == 0 {
				// A store of one experiment (a first run's --out) is
				// reported, not listed: `report --out DIR` after one run
				// printed a line naming it, and the user had to copy its
				// id back (the fifth new user's).
				list, err := storeList(out)
				if err != nil {
					return err
				}
				if n := len(list); n != 1 {
					if plot != "" || len(plotTrials) > 0 {
						return usagef("--plot and --plot-trial draw one experiment: name it, e.g. `headroom report EXP --plot shape.png` (`headroom report --list` lists them)")
					}
					if format != "table" {
						// A script asking for json got a text list once
						// a second run was stored (a review's).
						return usagef("--format %s reports one experiment and %s holds %d: name it (`headroom report --list --out %s` lists them)", format, out, n, out)
					}
					printExperiments(cmd, out, list)
					if n >= 2 {
						fmt.Fprintf(cmd.ErrOrStderr(), "%d experiments: name one to report it (headroom report ID --out %s)\n", n, out)
					}
					return nil
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "the only experiment under %s: %s\n", out, list[0].Dir)
				args = []string{list[0].Dir}
			}
			opts, err := sf.options()
			if err != nil {
				return err
			}
			type trialPlot struct{ trial, file string }
			var tplots []trialPlot
			seen := map[string]bool{}
			for _, tp := range plotTrials {
				parts := strings.SplitN(tp, "=", 2)
				if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
					return usagef("--plot-trial takes TRIAL=FILE, e.g. t0003=t0003.png (got %q)", tp)
				}
				if err := report.CheckPlotFile(parts[1]); err != nil {
					return usagef("--plot-trial %s: %v", tp, err)
				}
				if seen[parts[1]] {
					return usagef("--plot-trial: %s is named twice; give each trial its own file", parts[1])
				}
				seen[parts[1]] = true
				tplots = append(tplots, trialPlot{parts[0], parts[1]})
			}
			dir, err := findExperiment(args[0], out)
			if err != nil {
				return err
			}
			m, trials, records, err := readExperiment(dir, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if format != "json" {
				// Records are text anyone could have edited: a task name
				// with a newline would forge a row. JSON escapes its own.
				m, trials = columnNames(printable.Value(m), printable.Value(trials))
			}
			if cmd.Flags().Changed("baseline") && !slices.Contains(m.Ratios, opts.Baseline) {
				var names []string
				for _, r := range m.Ratios {
					names = append(names, r.String())
				}
				return usagef("--baseline %s: experiment %s did not run that ratio; its ratios are %s", opts.Baseline, m.ID, strings.Join(names, ", "))
			}
			rep := report.New(m.ID, &m, m.Ratios, trials, opts).WithTraceSource(uncappedTraces(dir, trials)).WithRecords(records)
			if plot != "" {
				if err := rep.Plot(plot); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", plot)
			}
			for _, tp := range tplots {
				samples, _, err := store.ReadTrace(dir, tp.trial)
				if err != nil {
					return err
				}
				if err := rep.PlotTrial(tp.trial, samples, tp.file); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", tp.file)
			}
			return rep.Write(cmd.OutOrStdout(), format)
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "table, markdown, csv or json")
	cmd.Flags().StringVar(&out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	cmd.Flags().StringVar(&plot, "plot", "", "also draw success and infra-error rate against ratio (and peaks against limits) to FILE.png or FILE.svg")
	cmd.Flags().StringArrayVar(&plotTrials, "plot-trial", nil, "also draw a trial's memory timeline: TRIAL=FILE.png (repeatable, one file per trial)")
	cmd.Flags().BoolVar(&list, "list", false, "list the experiments in the store")
	return cmd
}

// storeList is the store's experiments, read once; an --out that is not
// a directory is said as the flag's.
func storeList(root string) ([]store.Summary, error) {
	list, err := store.List(root)
	if errors.Is(err, syscall.ENOTDIR) {
		// "open X: not a directory" named no flag (the twenty-eighth
		// attacker's 8): clean's words.
		return nil, usagef("--out %s is not a directory of experiments (run and the console write them there)", root)
	}
	return list, err
}

func listExperiments(cmd *cobra.Command, root string) error {
	list, err := storeList(root)
	if err != nil {
		return err
	}
	printExperiments(cmd, root, list)
	return nil
}

// printExperiments lists the store's experiments, a line each.
func printExperiments(cmd *cobra.Command, root string, list []store.Summary) {
	w := cmd.OutOrStdout()
	if len(list) == 0 {
		fmt.Fprintf(w, "no experiments under %s\n", root)
		return
	}
	for _, s := range list {
		fmt.Fprintf(w, "%-24s %-12s %5d %-6s  %s  %s\n", s.Manifest.ID, s.Manifest.Status, s.Manifest.Trials, model.Noun(s.Manifest.Trials, "trial"), s.Manifest.Created.Local().Format("2006-01-02 15:04"), s.Dir)
	}
}

// traceFiles is the what-if predictions' trace source: a trial's trace
// file is read when a prediction first asks for it (a kill whose second
// the samples show, in a cell the report predicts or scores), not every
// uncapped trial's up front (at 26,700 trials that was thousands of
// files for predictions no section printed); a trace that cannot be read
// is left out, and its predictions name the step without the second.
// What is kept of each is the points a prediction can read
// (model.PredictionPoints), not the whole.
type traceFiles struct {
	dir    string
	trials map[string]*model.TrialResult
	read   map[string][]model.TracePoint
}

func uncappedTraces(dir string, trials []model.TrialResult) *traceFiles {
	tf := &traceFiles{dir: dir, trials: map[string]*model.TrialResult{}, read: map[string][]model.TracePoint{}}
	for i := range trials {
		if trials[i].Ratio.Uncapped {
			tf.trials[trials[i].ID] = &trials[i]
		}
	}
	return tf
}

// Points reads trialID's trace (once).
func (tf *traceFiles) Points(trialID string) []model.TracePoint {
	if pts, ok := tf.read[trialID]; ok {
		return pts
	}
	var pts []model.TracePoint
	if t := tf.trials[trialID]; t != nil {
		if samples, _, err := store.ReadTrace(tf.dir, trialID); err == nil {
			all := make([]model.TracePoint, len(samples))
			for i, s := range samples {
				all[i] = model.TracePoint{At: s.Time, WorkingSetBytes: s.WorkingSetBytes}
			}
			pts = model.PredictionPoints(all, t.Steps)
		}
	}
	tf.read[trialID] = pts
	return pts
}
