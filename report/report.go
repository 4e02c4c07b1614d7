// Package report renders an experiment's outcome matrix and statistics
// for people (table, markdown) and programs (CSV, JSON), and draws plots.
package report

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// Report is everything a report shows.
type Report struct {
	Experiment string
	Manifest   *store.Manifest
	Matrix     *model.Matrix
	Analysis   *model.Analysis
	Trials     []model.TrialResult
	// Traces give trials' memory samples by id (WithTraces), for what-if
	// predictions' seconds; a report without them still predicts.
	Traces model.TraceSource
	// Seeded names the tasks that replay a repeat exactly; nil: read from
	// the manifest's images (model.SeededImage).
	Seeded map[string]bool
	// records, when set (WithRecords), gives the JSON report each trial's
	// record as written, in Trials' order, instead of encoding Trials.
	records func(each func(raw []byte) error) error
}

// WithRecords makes the JSON report copy each trial's record as it was
// written (copy calls each with one raw JSON record per trial, in
// Trials' order) rather than encode Trials: the analysis may then read
// brief records, and a report of any size holds one record at a time.
func (r *Report) WithRecords(copy func(each func(raw []byte) error) error) *Report {
	r.records = copy
	return r
}

// Options choose the comparisons.
type Options struct {
	Baseline model.Ratio
	NoisePP  float64
	DetectPP float64
}

// DefaultOptions compares against 1x, calls gaps under 3 points noise and
// asks what detecting 3 points would take.
func DefaultOptions() Options {
	return Options{Baseline: model.Ratio{K: 1}, NoisePP: model.DefaultNoisePP, DetectPP: model.DefaultNoisePP}
}

// New analyses results. The baseline falls back to the tightest plain
// ratio present when the asked one was not run; a sweep with no plain
// column keeps it, and each knob's columns are compared with the
// mildest of them run (model.BaselineIn).
func New(experiment string, m *store.Manifest, ratios []model.Ratio, trials []model.TrialResult, o Options) *Report {
	mx := model.NewMatrix(ratios, trials)
	base := o.Baseline
	if !slices.Contains(mx.Ratios, base) {
		for _, r := range mx.Ratios {
			if r.Knobs.IsZero() {
				base = r
				break
			}
		}
	}
	return &Report{Experiment: experiment, Manifest: m, Matrix: mx, Analysis: model.Analyze(mx, base, o.NoisePP, o.DetectPP), Trials: trials}
}

// Formats lists what Write accepts.
var Formats = []string{"table", "markdown", "csv", "json"}

// Write renders the report in a format.
func (r *Report) Write(w io.Writer, format string) error {
	var write func(io.Writer) error
	switch format {
	case "table":
		write = r.Table
	case "markdown", "md":
		write = r.Markdown
	case "csv":
		write = r.CSV
	case "json":
		return r.JSON(w) // buffered as it streams
	default:
		return fmt.Errorf("unknown format %q: use %s", format, strings.Join(Formats, ", "))
	}
	// Buffered: the sections write a line at a time (a write to the
	// terminal or pipe each, thousands for a large sweep).
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

func pp(x float64) string { return model.PPText(x) }

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

func ci(i model.Interval) string { return fmt.Sprintf("[%.0f–%.0f%%]", 100*i.Lo, 100*i.Hi) }

func ciPP(i model.Interval) string { return model.PPInterval(i) }

func pval(p float64) string { return model.PText(p) }

func glyphs(c *model.Cell) string { return c.Marks() }

// NoData stands where a rate has no trial to be a rate of: a cell or a
// ratio whose trials were all cancelled. "0/0 7- [0–100%]" and "success
// rate 0% [0–100] (0/0)" read as a measured 0%.
const NoData = "—"

// ratioRates is a ratio's success and infra-error rates as the table and
// the markdown show them (the table with the success count: "61% (11/18)"),
// or NoData for a ratio with no trial counted.
func ratioRates(rs model.RatioStats, counts bool) (succ, infra string) {
	if rs.Success.Trials == 0 {
		return NoData + " (0 counted)", NoData
	}
	succ = rs.Success.RateText()
	if counts {
		succ += fmt.Sprintf(" (%d/%d)", rs.Success.Count(), rs.Success.Trials)
	}
	return succ, rs.Infra.RateText()
}

// cellText is "2/3 +K+ [21–94%]"; marked noise against the baseline. A
// cell with no counted trial is "— 7-": its cancelled trials, no rate.
func (r *Report) cellText(row model.RowKey, ratio model.Ratio) string {
	c := r.Matrix.Cell(row, ratio)
	if c == nil {
		return model.EmptyCellGlyph
	}
	if c.Rates.Counted == 0 {
		return NoData + " " + glyphs(c)
	}
	s, _ := r.Analysis.Cell(row, ratio)
	return fmt.Sprintf("%d/%d %s %s", c.Rates.Successes, c.Rates.Counted, glyphs(c), ci(s.SuccCI))
}

// Table writes the matrix with intervals, per-ratio rates, the paired
// comparisons against the baseline and the power line.
func (r *Report) Table(w io.Writer) error {
	a := r.Analysis
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if g := groupLine(r.Matrix.Ratios); g != nil {
		fmt.Fprintln(tw, strings.Join(g, "\t"))
	}
	head := []string{"task · agent"}
	for _, ratio := range r.Matrix.Ratios {
		head = append(head, ratio.String())
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	typos := r.typoNotes()
	for _, row := range r.Matrix.Rows {
		cols := []string{rowLabel(row, typos)}
		for _, ratio := range r.Matrix.Ratios {
			cols = append(cols, r.cellText(row, ratio))
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	succ, infra := []string{"success rate"}, []string{"infra-error rate"}
	for _, rs := range a.ByRatio {
		s, i := ratioRates(rs, true)
		succ, infra = append(succ, s), append(infra, i)
	}
	// The rows add up (model.RowsLegend): an indented row is a part of
	// the row above it.
	fmt.Fprintln(tw, strings.Join(succ, "\t"))
	if late := r.afterTimeoutRow(); late != nil {
		fmt.Fprintln(tw, strings.Join(append([]string{"  of which passed after a timeout"}, late...), "\t"))
	}
	fmt.Fprintln(tw, strings.Join(infra, "\t"))
	fmt.Fprintln(tw, strings.Join(append([]string{"  of which failed at the limit"}, r.memoryRow()...), "\t"))
	if outside := r.outsideRow(); outside != nil {
		fmt.Fprintln(tw, strings.Join(append([]string{"  of which from outside"}, outside...), "\t"))
	}
	fmt.Fprintln(tw, strings.Join(append([]string{"failed, the task's own"}, r.ownRow()...), "\t"))
	if err := tw.Flush(); err != nil {
		return err
	}
	if ty := r.typoLines(); ty != nil {
		fmt.Fprintf(w, "\n%s\n", strings.Join(ty, "\n"))
	}
	if nr := r.notRunLines(); nr != nil {
		fmt.Fprintf(w, "\n%s\n", strings.Join(nr, "\n"))
	}
	if im := r.importedLines(); im != nil {
		fmt.Fprintf(w, "\n%s\n", strings.Join(im, "\n"))
	}
	if g := r.gradingLines(); g != nil {
		fmt.Fprintf(w, "\n%s\n", strings.Join(g, "\n"))
	}
	fmt.Fprintf(w, "\n%s\n%s\n%s\n", r.glyphLegend(), intervalLegend, model.RowsLegend)
	if l := r.narrowLine(); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := model.FewRowsNote(a.ByRatio); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := r.causeLegend(); l != "" {
		fmt.Fprintln(w, l)
	}
	if len(a.Comparisons) > 0 {
		fmt.Fprintf(w, "\n%s, paired by task (%s):\n", r.againstWhat(), model.VerdictLegend(a.NoisePP))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "metric\tratio\tdiff\t95% CI\tp by task\ttasks\tdetectable\tverdict\tpooled p\t")
		for _, c := range a.Comparisons {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", c.Metric, comparedLabel(a, c), pp(c.Diff), ciPP(c.CI), pval(c.P), c.Tasks, model.DetectableText(c.MinDetectable), c.Label, pval(c.PooledP))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, QuestionsLegend)
	}
	if err := r.writeRegimes(w, false); err != nil {
		return err
	}
	if err := r.writeReplay(w, false); err != nil {
		return err
	}
	if err := r.writeMeasured(w, false); err != nil {
		return err
	}
	if err := r.writeResources(w, false); err != nil {
		return err
	}
	if err := r.writeWhatIf(w, false); err != nil {
		return err
	}
	if err := r.writeNoise(w, false); err != nil {
		return err
	}
	if err := r.writeVariance(w, false); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n"+r.PowerLine())
	return err
}

// outsideRow counts, per ratio, the infra errors from outside the
// container and its limits (pressure from outside, a kill by someone
// else, the engine lost); nil when there are none, so the report of a
// clean sweep is unchanged.
func (r *Report) outsideRow() []string {
	return r.countRow(func(rt *model.Rates) (int, string) {
		return rt.OutsideErrs, fmt.Sprintf("%d of %d infra", rt.OutsideErrs, rt.InfraErrs)
	})
}

// afterTimeoutRow counts, per ratio, the passes whose agent ran past its
// time limit (graded as the harness grades them); nil when there are none.
func (r *Report) afterTimeoutRow() []string {
	return r.countRow(func(rt *model.Rates) (int, string) {
		return rt.AfterTimeout, fmt.Sprintf("%d of %d passes", rt.AfterTimeout, rt.Successes)
	})
}

// countRow is a row of per-ratio counts as count says them; nil when every
// count is 0 (a row shown only when it has something to say).
func (r *Report) countRow(count func(*model.Rates) (int, string)) []string {
	var cols []string
	any := false
	for _, ratio := range r.Matrix.Ratios {
		n, text := count(r.Matrix.ByRatio[ratio])
		cols = append(cols, text)
		any = any || n > 0
	}
	if !any {
		return nil
	}
	return cols
}

// ownRow counts, per ratio, the trials that neither passed nor were an
// infra error: the task's own failures ("1/6").
func (r *Report) ownRow() []string {
	var cols []string
	for _, ratio := range r.Matrix.Ratios {
		rt := r.Matrix.ByRatio[ratio]
		cols = append(cols, fmt.Sprintf("%d/%d", rt.OwnFailures(), rt.Counted))
	}
	return cols
}

// memoryRow counts, per ratio, the trials that failed at their own memory
// limit (killed by it, or stalled at it) with the split: the one count of
// memory failures every view gives.
func (r *Report) memoryRow() []string {
	var cols []string
	for _, ratio := range r.Matrix.Ratios {
		cols = append(cols, r.Matrix.ByRatio[ratio].Memory.String())
	}
	return cols
}

// causeLegend names the cause glyphs the matrix shows ("" for none).
func (r *Report) causeLegend() string {
	var legend []string
	backend := ""
	if r.Manifest != nil {
		backend = r.Manifest.Engine.Name()
	}
	for _, c := range r.Matrix.CausesShown() {
		legend = append(legend, c.Glyph()+" "+c.DescribeOn(backend))
	}
	return strings.Join(legend, "  ")
}

// glyphLegend names the outcomes' glyphs the cells show, the cancelled
// count's where a cell has one, and the empty cell's.
func (r *Report) glyphLegend() string {
	var legend []string
	for _, o := range r.Matrix.OutcomesShown() {
		legend = append(legend, o.LegendEntry())
	}
	if r.Matrix.HasCancelled() {
		legend = append(legend, model.CancelledLegend())
		if r.hasUncounted() {
			legend = append(legend, NoData+" no trial counted: no rate")
		}
	}
	return strings.Join(append(legend, model.EmptyCellGlyph+" not run"), "  ")
}

// hasUncounted says whether a cell ran trials and counted none (NoData).
func (r *Report) hasUncounted() bool {
	for _, row := range r.Matrix.Cells {
		for _, c := range row {
			if c != nil && c.Rates.Counted == 0 && len(c.Outcomes) > 0 {
				return true
			}
		}
	}
	return false
}

// narrowLine says, when some cell's interval is wider than
// model.WideInterval, how many repeats a cell would narrow each to it
// ("" when none is): [0–100] at three repeats came with no hint.
func (r *Report) narrowLine() string {
	need, widest := 0, 0.0
	for _, row := range r.Matrix.Cells {
		for _, c := range row {
			k, n := c.Rates.Successes, c.Rates.Counted
			if m := model.RepeatsToNarrow(k, n, model.WideInterval); m > 0 {
				iv := model.Wilson(k, n)
				need, widest = max(need, m), max(widest, iv.Hi-iv.Lo)
			}
		}
	}
	if need == 0 {
		return ""
	}
	return fmt.Sprintf("Cell intervals up to %.0f points wide: ~%s a cell would narrow each to %.0f points (power, below, says which differences the design detects).", 100*widest, model.Quantity(need, "repeat"), 100*model.WideInterval)
}

const intervalLegend = "[lo–hi%] Wilson 95% interval of the cell; a rate's [lo–hi] is its 95% interval (clustered by task, Student's t; one task: Wilson), asymmetric near 0% and 100%"

// notRunLines say which task·agent rows could not run, and why: their
// trials are infra-errors of the task, outside every rate.
func (r *Report) notRunLines() []string {
	m := r.Matrix
	if len(m.NotRun) == 0 {
		return nil
	}
	rows := r.notRunRows()
	lines := []string{"Could not run (its trials are recorded as infra-errors and left out of every rate):"}
	for _, row := range rows {
		lines = append(lines, fmt.Sprintf("  %s · %s: %s", row.Task, row.Agent, m.NotRun[row]))
	}
	return lines
}

// typoNotes are, by task, what a suspected typo in its file did to its
// trials (model.TypoNote): the row is marked "(typo)" and the note said
// under the table, since the limits of every column follow from it.
func (r *Report) typoNotes() map[string]string {
	if r.Manifest == nil {
		return nil
	}
	out := map[string]string{}
	for _, t := range r.Manifest.Tasks {
		if n := model.TypoNote(t.Deviations, t.Resources); n != "" {
			out[t.Name] = n
		}
	}
	return out
}

// rowLabel is a row's name in a table: "task · agent", marked "(typo)"
// when its task's file has a suspected typo (typos: typoNotes).
func rowLabel(row model.RowKey, typos map[string]string) string {
	label := row.Task + " · " + row.Agent
	if _, ok := typos[row.Task]; ok {
		label += " (typo)"
	}
	return label
}

// typoLines say each marked row's typo, under a head ("" for none).
func (r *Report) typoLines() []string {
	notes := r.typoNotes()
	if len(notes) == 0 {
		return nil
	}
	lines := []string{"(typo): a key in the task's file looks misspelt:"}
	for _, name := range slices.Sorted(maps.Keys(notes)) {
		lines = append(lines, fmt.Sprintf("  %s: %s", name, notes[name]))
	}
	return lines
}

// notRunRows are the rows that could not run, in order.
func (r *Report) notRunRows() []model.RowKey {
	return slices.SortedFunc(maps.Keys(r.Matrix.NotRun), func(a, b model.RowKey) int {
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Agent, b.Agent))
	})
}

// againstWhat heads the comparisons: the baseline, or, in a sweep with
// no plain column, each knob's mildest setting.
func (r *Report) againstWhat() string {
	if slices.Contains(r.Matrix.Ratios, r.Analysis.Baseline) {
		return "Against " + r.Analysis.Baseline.String()
	}
	return "Each knob's settings against its mildest one run (no plain column)"
}

// PowerLine says what the design can tell apart.
func (r *Report) PowerLine() string {
	p := r.Analysis.Power
	rows := fmt.Sprintf("%d task·agent row", p.Tasks)
	if p.Tasks != 1 {
		rows += "s"
	}
	if p.MinDetectable == 0 {
		counted := 0
		for _, ratio := range r.Matrix.Ratios {
			if r.Matrix.ByRatio[ratio].Counted > 0 {
				counted++
			}
		}
		if len(r.Matrix.Ratios) > 1 && counted < 2 {
			// Two were asked for; one or none has a counted trial yet
			// (a new user's interrupted run was told to run two).
			return fmt.Sprintf("power: %s × %s; of the %d ratios asked for, %d has counted trials: nothing to compare yet (resume the run, or rerun what was cancelled)", rows, model.Quantity(p.Repeats, "repeat"), len(r.Matrix.Ratios), counted)
		}
		return fmt.Sprintf("power: %s × %s; run at least two ratios to compare", rows, model.Quantity(p.Repeats, "repeat"))
	}
	if note := p.ExactNote(false); note != "" {
		return fmt.Sprintf("power: %s × %s cannot detect any success difference: %s", rows, model.Quantity(p.Repeats, "repeat"), note)
	}
	if !model.Detectable(p.MinDetectable) {
		// As the console says it: where no count of repeats gets to 3pp,
		// more tasks, not more repeats (a new user read "add tasks or
		// repeats" here beside the console's line).
		add := "add tasks: more repeats cannot get there"
		if p.RepeatsNeeded > 0 {
			add = fmt.Sprintf("add repeats (about %s per cell detect %.0fpp) or tasks", model.Quantity(p.RepeatsNeeded, "repeat"), 100*p.Detect)
		}
		return fmt.Sprintf("power: %s × %s cannot detect any success difference with this design (80%% power, α=0.05); %s", rows, model.Quantity(p.Repeats, "repeat"), add)
	}
	line := fmt.Sprintf("power: %s × %s detect a success difference of %s at 80%% power, α=0.05",
		rows, model.Quantity(p.Repeats, "repeat"), model.DetectableText(p.MinDetectable))
	switch {
	case p.Detect <= 0:
	case p.RepeatsNeeded == 0:
		line += fmt.Sprintf("; detecting %.0fpp needs more tasks, not more repeats", 100*p.Detect)
	default:
		line += fmt.Sprintf("; detecting %.0fpp needs about %s per cell", 100*p.Detect, model.Quantity(p.RepeatsNeeded, "repeat"))
	}
	return line
}

// Markdown writes the same as Table as GitHub-flavoured markdown.
func (r *Report) Markdown(w io.Writer) error {
	a := r.Analysis
	title := r.Experiment
	if title == "" {
		title = "experiment"
	}
	fmt.Fprintf(w, "# headroom report: %s\n\n", mdText(title))
	if m := r.Manifest; m != nil {
		fmt.Fprintf(w, "Seed %d · %s · concurrency %d · %s · kernel %s · %d CPUs, %s\n\n",
			m.Seed, model.Quantity(m.Repeats, "repeat"), m.Concurrency, m.Engine.Summary(), m.Host.Kernel, m.Host.CPUs, model.FormatBytes(m.Host.MemoryBytes))
	}
	if im := r.importedLines(); im != nil {
		fmt.Fprintf(w, "%s\n\n", mdText(strings.Join(im, "\n")))
	}
	if g := r.gradingLines(); g != nil {
		fmt.Fprintf(w, "%s\n\n", strings.Join(g, "\n"))
	}
	head := "| task · agent |"
	sep := "|---|"
	for _, ratio := range r.Matrix.Ratios {
		head += " " + ratio.String() + " |"
		sep += "---|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	typos := r.typoNotes()
	for _, row := range r.Matrix.Rows {
		line := "| " + mdCell(rowLabel(row, typos)) + " |"
		for _, ratio := range r.Matrix.Ratios {
			line += " `" + mdCode(r.cellText(row, ratio)) + "` |"
		}
		fmt.Fprintln(w, line)
	}
	succ, infra := "| **success rate** |", "| **infra-error rate** |"
	for _, rs := range a.ByRatio {
		s, i := ratioRates(rs, false)
		succ += " " + s + " |"
		infra += " " + i + " |"
	}
	fmt.Fprintln(w, succ)
	if late := r.afterTimeoutRow(); late != nil {
		fmt.Fprintln(w, "| of which passed after a timeout | "+strings.Join(late, " | ")+" |")
	}
	fmt.Fprintln(w, infra)
	fmt.Fprintln(w, "| of which failed at the limit | "+strings.Join(r.memoryRow(), " | ")+" |")
	if outside := r.outsideRow(); outside != nil {
		fmt.Fprintln(w, "| of which from outside | "+strings.Join(outside, " | ")+" |")
	}
	fmt.Fprintln(w, "| **failed, the task's own** | "+strings.Join(r.ownRow(), " | ")+" |")
	fmt.Fprintf(w, "\n`%s`\n\n%s\n\n%s\n", r.glyphLegend(), intervalLegend, model.RowsLegend)
	if l := r.narrowLine(); l != "" {
		fmt.Fprintf(w, "\n%s\n", l)
	}
	if l := model.FewRowsNote(a.ByRatio); l != "" {
		fmt.Fprintf(w, "\n%s\n", l)
	}
	if l := r.causeLegend(); l != "" {
		fmt.Fprintf(w, "\n`%s`\n", l)
	}

	if ty := r.typoLines(); ty != nil {
		fmt.Fprintf(w, "\n%s\n\n", mdText(ty[0]))
		for _, l := range ty[1:] {
			fmt.Fprintf(w, "- %s\n", mdText(strings.TrimSpace(l)))
		}
	}
	if nr := r.notRunLines(); nr != nil {
		fmt.Fprintf(w, "\n%s\n\n", mdText(nr[0]))
		for _, l := range nr[1:] {
			fmt.Fprintf(w, "- %s\n", mdText(strings.TrimSpace(l)))
		}
	}
	if len(a.Comparisons) > 0 {
		fmt.Fprintf(w, "\n## %s, paired by task\n\n%s.\n\n", r.againstWhat(), model.VerdictLegend(a.NoisePP))
		fmt.Fprintln(w, "| metric | ratio | diff | 95% CI | p by task | tasks | detectable | verdict | pooled p |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		for _, c := range a.Comparisons {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", c.Metric, comparedLabel(a, c), pp(c.Diff), ciPP(c.CI), pval(c.P), c.Tasks, model.DetectableText(c.MinDetectable), c.Label, pval(c.PooledP))
		}
		fmt.Fprintln(w, "\n"+QuestionsLegend)
	}
	if err := r.writeRegimes(w, true); err != nil {
		return err
	}
	if err := r.writeReplay(w, true); err != nil {
		return err
	}
	if err := r.writeMeasured(w, true); err != nil {
		return err
	}
	if err := r.writeResources(w, true); err != nil {
		return err
	}
	if err := r.writeWhatIf(w, true); err != nil {
		return err
	}
	if err := r.writeNoise(w, true); err != nil {
		return err
	}
	if err := r.writeVariance(w, true); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.PowerLine())
	return err
}

// CSV writes one row per cell and one per ratio (kind = cell | ratio). A
// cell or ratio with no counted trial (all cancelled) has its rates and
// intervals empty, not 0.0000 beside counted 0.
func (r *Report) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	cw.Write([]string{"kind", "task", "agent", "ratio", "counted", "successes", "success_rate", "success_lo", "success_hi", "infra_errors", "infra_error_rate", "infra_lo", "infra_hi", "p_vs_baseline", "noise_vs_baseline", "verdict_vs_baseline", "outcomes"})
	for _, c := range r.Analysis.Cells {
		cell := r.Matrix.Cell(c.RowKey, c.Ratio)
		if c.Success.N == 0 {
			if cell != nil && len(cell.Outcomes) > 0 {
				cw.Write([]string{"cell", csvText(c.Task), csvText(c.Agent), csvText(c.Ratio.String()), "0", "0", "", "", "", "0", "", "", "", "", "", "", glyphs(cell)})
			}
			continue
		}
		cw.Write([]string{"cell", csvText(c.Task), csvText(c.Agent), csvText(c.Ratio.String()), strconv.Itoa(c.Success.N), strconv.Itoa(c.Success.K), f(c.Success.Rate()), f(c.SuccCI.Lo), f(c.SuccCI.Hi),
			strconv.Itoa(c.Infra.K), f(c.Infra.Rate()), f(c.InfraCI.Lo), f(c.InfraCI.Hi), f(c.VsBaseline.P), strconv.FormatBool(c.Noise), c.Label, glyphs(cell)})
	}
	for _, row := range r.notRunRows() {
		cw.Write([]string{"not-run", csvText(row.Task), csvText(row.Agent), "", "0", "", "", "", "", "", "", "", "", "", "", "", csvText(r.Matrix.NotRun[row])})
	}
	for _, rs := range r.Analysis.ByRatio {
		// A ratio's p and noise are the table's success comparison
		// against the baseline, paired by task (empty for the baseline
		// itself): the table showed them and the CSV left them out.
		p, noise, label := "", "", ""
		if c, ok := r.Analysis.Comparison(model.Success, rs.Ratio); ok {
			p, noise, label = f(c.P), strconv.FormatBool(c.Noise), c.Label
		}
		if rs.Success.Trials == 0 {
			cw.Write([]string{"ratio", "", "", csvText(rs.Ratio.String()), "0", "0", "", "", "", "0", "", "", "", p, noise, label, ""})
			continue
		}
		cw.Write([]string{"ratio", "", "", csvText(rs.Ratio.String()), strconv.Itoa(rs.Success.Trials), strconv.Itoa(rs.Success.Count()), f(rs.Success.Mean), f(rs.Success.CI.Lo), f(rs.Success.CI.Hi),
			strconv.Itoa(rs.Infra.Count()), f(rs.Infra.Mean), f(rs.Infra.CI.Lo), f(rs.Infra.CI.Hi), p, noise, label, ""})
	}
	cw.Flush()
	return cw.Error()
}

// JSONCell is one cell in the JSON form.
type JSONCell struct {
	Task          string          `json:"task"`
	Agent         string          `json:"agent"`
	Ratio         model.Ratio     `json:"ratio"`
	Outcomes      []model.Outcome `json:"outcomes"`
	Causes        []model.Cause   `json:"causes,omitempty"` // each outcome's, when any has one
	Counted       int             `json:"counted"`
	Successes     int             `json:"successes"`
	InfraErrors   int             `json:"infra_errors"`
	OutsideErrors int             `json:"outside_errors,omitempty"` // of InfraErrors, from outside
	// SuccessRate and InfraErrorRate are null when no trial counted
	// (all cancelled): no data, where 0 read as a measured 0%.
	SuccessRate    *float64 `json:"success_rate"`
	InfraErrorRate *float64 `json:"infra_error_rate"`
	// MemoryFailures are the trials that failed at their own limit.
	MemoryFailures model.MemoryFailures `json:"memory_failures"`
}

// JSONNotRun is a task·agent row that could not run, and why.
type JSONNotRun struct {
	Task   string `json:"task"`
	Agent  string `json:"agent"`
	Reason string `json:"reason"`
}

// causesIfAny is nil when no trial has a cause (the JSON leaves it out).
func causesIfAny(cs []model.Cause) []model.Cause {
	for _, c := range cs {
		if c != model.CauseNone {
			return cs
		}
	}
	return nil
}

// JSONRatio is one ratio's totals in the JSON form.
type JSONRatio struct {
	Ratio   model.Ratio `json:"ratio"`
	Counted int         `json:"counted"`
	// Null when no trial counted, as JSONCell's.
	SuccessRate    *float64 `json:"success_rate"`
	InfraErrorRate *float64 `json:"infra_error_rate"`
	OutsideErrors  int      `json:"outside_errors,omitempty"`
	// MemoryFailures are the trials that failed at their own limit.
	MemoryFailures model.MemoryFailures `json:"memory_failures"`
}

// JSON writes one document holding everything needed to recompute the
// statistics: the manifest, every trial record with its seed, the matrix
// and the analysis.
func (r *Report) JSON(w io.Writer) error {
	doc := JSONDoc{Experiment: r.Experiment, Manifest: r.Manifest, Cells: []JSONCell{}, Analysis: r.Analysis, WhatIf: r.WhatIf(), Variance: model.Variances(r.Trials), Regimes: r.Regimes()}
	for _, row := range r.notRunRows() {
		doc.NotRun = append(doc.NotRun, JSONNotRun{Task: row.Task, Agent: row.Agent, Reason: r.Matrix.NotRun[row]})
	}
	m := r.Matrix
	for _, row := range m.Rows {
		for _, ratio := range m.Ratios {
			c := m.Cell(row, ratio)
			if c == nil {
				continue
			}
			doc.Cells = append(doc.Cells, JSONCell{Task: row.Task, Agent: row.Agent, Ratio: ratio, Outcomes: c.Outcomes,
				Causes: causesIfAny(c.Causes), OutsideErrors: c.Rates.OutsideErrs,
				Counted: c.Rates.Counted, Successes: c.Rates.Successes, InfraErrors: c.Rates.InfraErrs,
				SuccessRate: rateOf(c.Rates.Counted, c.Rates.SuccessRate), InfraErrorRate: rateOf(c.Rates.Counted, c.Rates.InfraErrorRate), MemoryFailures: c.Rates.Memory})
		}
	}
	for _, ratio := range m.Ratios {
		rt := m.ByRatio[ratio]
		doc.Ratios = append(doc.Ratios, JSONRatio{Ratio: ratio, Counted: rt.Counted, SuccessRate: rateOf(rt.Counted, rt.SuccessRate), InfraErrorRate: rateOf(rt.Counted, rt.InfraErrorRate), OutsideErrors: rt.OutsideErrs, MemoryFailures: rt.Memory})
	}
	if r.records != nil {
		return writeJSONDocRecords(w, doc, len(r.Trials), r.records)
	}
	return writeJSONDoc(w, doc, r.Trials)
}

// rateOf is a rate for the JSON form: nil (null) when no trial counted.
func rateOf(counted int, rate func() float64) *float64 {
	if counted == 0 {
		return nil
	}
	v := rate()
	return &v
}

// JSONDoc is the JSON report but for its trials, which come last
// (JSONReport is the whole).
type JSONDoc struct {
	Experiment string               `json:"experiment"`
	Manifest   *store.Manifest      `json:"manifest,omitempty"`
	Cells      []JSONCell           `json:"cells"`
	Ratios     []JSONRatio          `json:"ratios"`
	NotRun     []JSONNotRun         `json:"not_run,omitempty"`
	Analysis   *model.Analysis      `json:"analysis"`
	WhatIf     *WhatIf              `json:"what_if,omitempty"`
	Variance   []model.TaskVariance `json:"variance,omitempty"`
	// Regimes split the change between adjacent ratios into trials
	// rescued from an infra failure and trials made easier.
	Regimes []model.RegimeSplit `json:"regimes,omitempty"`
}

// JSONReport is the JSON report (`--format json`) as a reader decodes
// it: the document, then every trial's record.
type JSONReport struct {
	JSONDoc
	Trials []model.TrialResult `json:"trials"`
}

// writeJSONDoc writes doc with a last member "trials", one trial's
// record a line as the store writes it (compact JSON), the rest
// indented as json.Encoder with SetIndent("", "  ") writes it: a report
// of tens of thousands of trials never holds their encoding at once.
func writeJSONDoc(w io.Writer, doc JSONDoc, trials []model.TrialResult) error {
	return writeJSONTrials(w, doc, len(trials), func(put func([]byte) error) error {
		for _, t := range trials {
			b, err := json.Marshal(t)
			if err != nil {
				return err
			}
			if err := put(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// quoteSeeds writes every seed of a JSON text as a string ("seed":
// "17979624318460405210"): seeds are 64-bit, and jq 1.6 (Debian 12's),
// JavaScript and any reader that takes JSON numbers as doubles round
// those above 2^53, so the seed a user copied to rerun a trial was not
// its seed. The store's records keep numbers (headroom reads them
// exactly, and resume checks every record's seed); the report is what
// other tools read. A "seed" inside a string value is escaped (\"seed\")
// and left alone. The text is returned as it is when it has no seed.
func quoteSeeds(b []byte) []byte {
	key := []byte(`"seed":`)
	var out []byte
	done := 0
	for i := 0; ; {
		j := bytes.Index(b[i:], key)
		if j < 0 {
			break
		}
		at := i + j + len(key)
		i = at
		if i-len(key) > 0 && b[i-len(key)-1] == '\\' {
			continue
		}
		for at < len(b) && b[at] == ' ' {
			at++
		}
		end := at
		for end < len(b) && b[end] >= '0' && b[end] <= '9' {
			end++
		}
		if end == at {
			continue
		}
		out = append(append(append(append(out, b[done:at]...), '"'), b[at:end]...), '"')
		done, i = end, end
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// ReadJSON reads a JSON report (Format json) back into v (a *JSONReport,
// or any type with its fields): its seeds, written as strings for other
// tools (quoteSeeds), become numbers again first.
func ReadJSON(data []byte, v any) error {
	return json.Unmarshal(unquotedSeeds.ReplaceAll(data, []byte(`"seed":$1`)), v)
}

// unquotedSeeds finds a seed quoteSeeds wrote as a string (not one inside
// a string value, whose quotes are escaped).
var unquotedSeeds = regexp.MustCompile(`"seed":\s*"([0-9]+)"`)

// writeJSONDocRecords is writeJSONDoc with the n trials' records copied
// verbatim, the bytes of trials.jsonl's lines: nothing decoded, nothing
// re-indented (json.Indent over every byte of 490 MB of records was most
// of the JSON report's CPU at 26,700 trials).
func writeJSONDocRecords(w io.Writer, doc JSONDoc, n int, copy func(each func(raw []byte) error) error) error {
	return writeJSONTrials(w, doc, n, copy)
}

// writeJSONTrials writes doc, then its n trials as each puts them (one
// compact record a call, a line each).
func writeJSONTrials(w io.Writer, doc JSONDoc, n int, each func(put func([]byte) error) error) error {
	head, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	head = quoteSeeds(head)
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(head[:len(head)-2]) // up to the closing "\n}"
	bw.WriteString(",\n  \"trials\": ")
	if n == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("[\n")
		i := 0
		err := each(func(b []byte) error {
			if i == n {
				return fmt.Errorf("the JSON report has %d trials and was given more records", n)
			}
			bw.WriteString("    ")
			bw.Write(quoteSeeds(b))
			if i < n-1 {
				bw.WriteByte(',')
			}
			bw.WriteByte('\n')
			i++
			return nil
		})
		if err != nil {
			return err
		}
		if i != n {
			return fmt.Errorf("the JSON report wrote %d trial records of %d", i, n)
		}
		bw.WriteString("  ]")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// QuestionsLegend says which question each p answers.
const QuestionsLegend = "p by task (the tasks paired, each its own difference) asks \"would tasks like these change?\"; pooled p (Fisher's exact test over all trials) asks \"did this suite's score change?\""
