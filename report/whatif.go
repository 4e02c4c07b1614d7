package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// WithTraces gives the report the trials' memory traces (by trial id),
// so a what-if kill can say at what second it would land.
func (r *Report) WithTraces(traces map[string][]model.TracePoint) *Report {
	return r.WithTraceSource(model.TraceMap(traces))
}

// WithTraceSource is WithTraces with the traces read when a prediction
// asks for one (cli reads a trial's trace file then).
func (r *Report) WithTraceSource(traces model.TraceSource) *Report {
	r.Traces = traces
	return r
}

// WhatIf is the what-if section: cells not run, predicted from the
// uncapped trials, and the predictions' accuracy where a ratio was run.
type WhatIf struct {
	Predicted []model.PredictedCell `json:"predicted"`
	// Accuracy scores each trial of a task that replays (seeded) against
	// its uncapped twin; Rates scores every measured cell's rate.
	Accuracy []model.Confusion `json:"accuracy"`
	Rates    []model.RateCheck `json:"rates,omitempty"`
}

// WhatIf predicts the standard ratios the experiment did not run and
// scores predictions of the ones it did; nil when no uncapped trial has
// step records to predict from.
func (r *Report) WhatIf() *WhatIf {
	usable := false
	for _, t := range r.Trials {
		usable = usable || (t.Ratio.Uncapped && len(t.Steps) > 0)
	}
	if !usable {
		return nil
	}
	return &WhatIf{
		Predicted: model.PredictCells(r.Trials, r.Traces, model.StandardRatios),
		Accuracy:  model.EvaluatePredictions(r.Trials, r.Traces, r.seeded()),
		Rates:     model.RateChecks(r.Trials),
	}
}

// seeded says which tasks replay a repeat exactly, from the manifest's
// images and the trials that ran a recorded session (Seeded overrides it).
func (r *Report) seeded() map[string]bool {
	if r.Seeded != nil {
		return r.Seeded
	}
	out := map[string]bool{}
	if r.Manifest != nil {
		for _, t := range r.Manifest.Tasks {
			out[t.Name] = model.SeededImage(t.Image)
		}
	}
	for _, t := range r.Trials {
		if t.Replayed() {
			out[t.Task] = true // a recorded session: the same actions each repeat
		}
	}
	return out
}

// predictedText is a predicted cell: its predicted kill rate with the
// interval, and where the first kill would land.
func predictedText(c model.PredictedCell) string {
	s := c.RateText()
	for _, p := range c.Predictions {
		if p.Killed {
			s += ", first " + strings.TrimPrefix(p.String(), "killed ")
			break
		}
	}
	if c.Note != "" {
		s += " †"
	}
	return s
}

// writeWhatIf writes the section as a table or as markdown.
func (r *Report) writeWhatIf(w io.Writer, md bool) error {
	wi := r.WhatIf()
	if wi == nil {
		return nil
	}
	heading := func(s string) {
		if md {
			fmt.Fprintf(w, "\n## %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s:\n", s)
		}
	}
	if len(wi.Predicted) > 0 {
		heading("What-if: ratios not run, predicted from the uncapped trials (≈ predicted, not measured)")
		var ratios []model.Ratio
		cells := map[model.RowKey]map[model.Ratio]model.PredictedCell{}
		var rows []model.RowKey
		for _, c := range wi.Predicted {
			k := model.RowKey{Task: c.Task, Agent: c.Agent}
			if cells[k] == nil {
				cells[k] = map[model.Ratio]model.PredictedCell{}
				rows = append(rows, k)
			}
			cells[k][c.Ratio] = c
			found := false
			for _, x := range ratios {
				found = found || x == c.Ratio
			}
			if !found {
				ratios = append(ratios, c.Ratio)
			}
		}
		sortRatios(ratios)
		head := []string{"task · agent"}
		for _, x := range ratios {
			head = append(head, x.String())
		}
		var lines [][]string
		for _, k := range rows {
			cols := []string{k.Task + " · " + k.Agent}
			for _, x := range ratios {
				c, ok := cells[k][x]
				if !ok {
					cols = append(cols, model.EmptyCellGlyph)
					continue
				}
				cols = append(cols, predictedText(c))
			}
			lines = append(lines, cols)
		}
		if err := writeGrid(w, md, head, lines); err != nil {
			return err
		}
		fmt.Fprintln(w, "\nkilled ≈k/n: of the n uncapped runs, k peaked past that ratio's limit; [lo–hi%] is the Wilson 95% interval of the rate (0 of 20 still leaves up to 16%).")
		for _, c := range wi.Predicted {
			if c.Note != "" {
				fmt.Fprintf(w, "† %s · %s %s: %s\n", c.Task, c.Agent, c.Ratio, c.Note)
			}
		}
	}
	if len(wi.Rates) > 0 {
		heading("What-if rates: each measured cell's failures at the limit against the rate predicted from the uncapped peaks")
		head := []string{"task · agent", "ratio", "predicted killed", "measured failed at the limit", "near the limit", ""}
		var lines [][]string
		for _, rc := range wi.Rates {
			verdict, near := rc.Verdict(), ""
			if rc.Borderline {
				near = "borderline"
			}
			lines = append(lines, []string{rc.Task + " · " + rc.Agent, rc.Ratio.String(), rc.PredictedText(), rc.Measured.String(), near, verdict})
		}
		if err := writeGrid(w, md, head, lines); err != nil {
			return err
		}
		fmt.Fprintln(w, "\n"+model.RateVerdictLegend+" For a task not replayed from a seed (a real command) this is the only score a prediction has: its uncapped twin is another run, not the same one.")
	}
	if len(wi.Accuracy) == 0 {
		return nil
	}
	heading("What-if accuracy: each measured trial of a task that replays (seeded) predicted from its uncapped twin alone")
	head := []string{"ratio", "trials", "kills right", "pass/fail right", "TP", "FP", "FN", "TN", "clear-cut kills right", "borderline kills right"}
	var lines [][]string
	var right, total int
	for _, c := range wi.Accuracy {
		right += c.TP + c.TN
		total += c.N()
		lines = append(lines, []string{c.Ratio.String(), fmt.Sprint(c.N()), fmt.Sprintf("%d (%s)", c.TP+c.TN, pct(c.KillAccuracy())),
			fmt.Sprintf("%d (%s)", c.OutcomeAgree, pct(float64(c.OutcomeAgree)/float64(c.N()))),
			fmt.Sprint(c.TP), fmt.Sprint(c.FP), fmt.Sprint(c.FN), fmt.Sprint(c.TN),
			fmt.Sprintf("%d/%d", c.TP+c.TN-c.BorderlineRight, c.N()-c.Borderline), fmt.Sprintf("%d/%d", c.BorderlineRight, c.Borderline)})
	}
	if err := writeGrid(w, md, head, lines); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nTP: predicted killed and killed; FP: predicted killed, survived; FN: predicted to survive, killed; TN: both survived. Borderline: the uncapped peak within %.0f%% under to %.0f%% over the limit, where reclaimable cache and a program's own retries decide.\n",
		100*model.BorderlineBelow, 100*model.BorderlineAbove)
	byID := map[string]model.TrialResult{}
	for _, t := range r.Trials {
		byID[t.ID] = t
	}
	var misses []string
	for _, c := range wi.Accuracy {
		for _, m := range c.Misses {
			kill := "not killed"
			if m.Killed {
				kill = "killed"
			}
			line := fmt.Sprintf("%s %s · %s %s: predicted %s, measured %s (%s)", m.Trial, m.Task, m.Agent, c.Ratio, m.Predicted, m.Measured, kill)
			if m.Predicted.Borderline {
				line += "; borderline"
			}
			t := byID[m.Trial]
			if cpu := t.CPU; !m.Killed && cpu != nil && cpu.ThrottledShare() > 0.05 {
				// Memory predictions cannot see a CPU limit's effect.
				line += fmt.Sprintf("; CPU throttled in %s of its periods (%s withheld): a CPU effect, which memory traces do not predict",
					pct(cpu.ThrottledShare()), cpu.Throttled().Round(10*time.Millisecond))
			}
			// A failure the kernel puts at the trial's own limit is the
			// limit's, however loaded the host.
			switch {
			case t.MemoryFailure().Failed():
				line += "; " + t.MemoryFailure().String() + " at its own limit (the kernel's evidence), not the host"
			case t.Noise != nil && t.Noise.Contended:
				line += "; ran contended (" + t.Noise.Why + ")"
			}
			misses = append(misses, line)
		}
	}
	if len(misses) > 0 {
		fmt.Fprintf(w, "\nWhere predictions failed (%d):\n", len(misses))
		const most = 12
		for i, m := range misses {
			if i == most {
				fmt.Fprintf(w, "  … and %d more (--format json lists them all)\n", len(misses)-most)
				break
			}
			if md {
				fmt.Fprintf(w, "- %s\n", m)
			} else {
				fmt.Fprintf(w, "  %s\n", m)
			}
		}
	}
	var names []string
	for _, c := range wi.Accuracy {
		names = append(names, c.Ratio.String())
	}
	var border, borderRight int
	for _, c := range wi.Accuracy {
		border += c.Borderline
		borderRight += c.BorderlineRight
	}
	// Clear-cut predictions are nearly certain; the headline keeps the
	// borderline ones apart so that they do not carry it.
	// Where a clear-cut prediction missed, the uncapped run does not
	// stand for the limited ones (a task whose use follows its limit,
	// one that holds at it): the sweep keeps them. It had recommended
	// running uncapped alone after 0 of 2 clear-cut kills right (a
	// fourth new user's).
	if clear, clearRight := total-border, right-borderRight; clearRight < clear {
		_, err := fmt.Fprintf(w, "\nKeep measuring %s for these tasks: predicted from the uncapped runs, clear-cut kills were %d of %d right here (borderline %d of %d), so an uncapped run does not stand for them (a task whose memory follows its limit cannot be predicted from one).\n",
			strings.Join(names, ", "), clearRight, clear, borderRight, border)
		return err
	}
	_, err := fmt.Fprintf(w, "\nSmallest sweep for these tasks: run uncapped alone with %s; %s are then predicted with the accuracy measured here: clear-cut kills %d of %d right, borderline %d of %d.\n",
		model.Quantity(max(r.repeats(), 1), "repeat"), strings.Join(names, ", "), right-borderRight, total-border, borderRight, border)
	return err
}

// repeats is the experiment's repeats, from its manifest or its trials.
func (r *Report) repeats() int {
	if r.Manifest != nil && r.Manifest.Repeats > 0 {
		return r.Manifest.Repeats
	}
	n := 0
	for _, t := range r.Trials {
		n = max(n, t.Repeat)
	}
	return n
}

// writeResources writes each cell's median peak, CPU and throttling,
// when the trials have CPU records.
func (r *Report) writeResources(w io.Writer, md bool) error {
	hostCPUs := 0
	if r.Manifest != nil {
		hostCPUs = r.Manifest.Host.CPUs
	}
	use, ok := model.ResourceUse(r.Trials, hostCPUs)
	if !ok {
		return nil
	}
	if md {
		fmt.Fprintf(w, "\n## Resources per cell\n\nMedian peak (each trial's larger of the kernel's peak and the sampled one) · average cores · share of CFS periods throttled, and CPU time withheld per trial.\n\n")
	} else {
		fmt.Fprintf(w, "\nResources per cell (median peak: each trial's larger of the kernel's peak and the sampled one · average cores · share of CFS periods throttled, CPU time withheld per trial):\n")
	}
	head := []string{"task · agent"}
	for _, x := range r.Matrix.Ratios {
		head = append(head, x.String())
	}
	var lines [][]string
	for _, row := range r.Matrix.Rows {
		cols := []string{row.Task + " · " + row.Agent}
		for _, x := range r.Matrix.Ratios {
			c := use[row][x]
			if c == nil {
				cols = append(cols, model.EmptyCellGlyph)
				continue
			}
			s := model.FormatBytes(c.MedianPeakBytes)
			if c.CPUTrials > 0 {
				s += fmt.Sprintf(" %.2f cores", c.Cores())
				switch {
				case c.CPU.ThrottledNanos > 0:
					s += fmt.Sprintf(" thr %s %s", pct(c.CPU.ThrottledShare()), c.MeanThrottled().Round(10*time.Millisecond))
				case c.CPU.Periods > 0:
					s += " thr 0%"
				}
			}
			cols = append(cols, s)
		}
		lines = append(lines, cols)
	}
	return writeGrid(w, md, head, lines)
}

// mdCell is text in a markdown table's cell: a `|` of its own (a task
// named "a|b") escaped, so it cannot end the cell and forge another, and
// its HTML escaped (mdText), so it cannot be markup.
func mdCell(s string) string { return strings.ReplaceAll(mdText(s), "|", `\|`) }

// mdRow is a markdown table's row of cells, each escaped.
func mdRow(cells []string) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdCell(c)
	}
	return "| " + strings.Join(out, " | ") + " |"
}

// writeGrid writes rows under a header, aligned or as a markdown table.
func writeGrid(w io.Writer, md bool, head []string, rows [][]string) error {
	if md {
		fmt.Fprintln(w, mdRow(head))
		fmt.Fprintln(w, strings.Repeat("|---", len(head))+"|")
		for _, r := range rows {
			fmt.Fprintln(w, mdRow(r))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

func sortRatios(rs []model.Ratio) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Less(rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}
