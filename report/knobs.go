package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/headroom-eval/headroom/model"
)

// groupLine is the matrix's column-group heading row (nil when no
// column has a knob).
func groupLine(cols []model.Ratio) []string {
	g := model.ColumnGroups(cols)
	if g == nil {
		return nil
	}
	return append([]string{""}, g...)
}

// writeMeasured writes, per cell, what the knobs' effect measured: inside
// the container by the task's own steps, or from the cgroups of the
// trial and its neighbours; nothing when no trial measured anything.
func (r *Report) writeMeasured(w io.Writer, md bool) error {
	cells := map[model.RowKey]map[model.Ratio][]model.TrialResult{}
	any := false
	for _, t := range r.Trials {
		if t.Knobs == nil || len(t.Knobs.Measured) == 0 {
			continue
		}
		any = true
		row := model.RowKey{Task: t.Task, Agent: t.Agent}
		if cells[row] == nil {
			cells[row] = map[model.Ratio][]model.TrialResult{}
		}
		cells[row][t.Ratio] = append(cells[row][t.Ratio], t)
	}
	if !any {
		return nil
	}
	// Without a knob in any column the figures are the trials' own
	// (agent_time is measured always): not the effect of a knob.
	title := "Measured inside the trials"
	for _, t := range r.Trials {
		if !t.Ratio.Knobs.IsZero() {
			title = "Measured effect of the knobs"
			break
		}
	}
	if md {
		fmt.Fprintf(w, "\n## %s\n\nMedian per cell, as measured inside the trial's container by its own steps (or from the cgroups of the trial and its neighbours).\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s (median per cell, inside the trial's container or from the cgroups of it and its neighbours):\n", title)
	}
	head := []string{"task · agent"}
	for _, x := range r.Matrix.Ratios {
		head = append(head, x.String())
	}
	var lines [][]string
	for _, row := range r.Matrix.Rows {
		if cells[row] == nil {
			continue
		}
		cols := []string{row.Task + " · " + row.Agent}
		for _, x := range r.Matrix.Ratios {
			s := model.MeasuredText(cells[row][x])
			if s == "" {
				s = model.EmptyCellGlyph
			}
			cols = append(cols, s)
		}
		lines = append(lines, cols)
	}
	if err := writeGrid(w, md, head, lines); err != nil {
		return err
	}
	r.writeNeighboursTook(w, md)
	return r.writeKnobNotes(w, md)
}

// writeNeighboursTook says, per neighbours column, what the neighbours
// were asked to take and what they took (a column's label is the ask:
// 4 × 100% of a core once delivered 0.31 cores in all).
func (r *Report) writeNeighboursTook(w io.Writer, md bool) {
	for _, col := range r.Matrix.Ratios {
		k := col.Knobs
		if k.Neighbours == 0 {
			continue
		}
		var trials []model.TrialResult
		for _, t := range r.Trials {
			if t.Ratio == col {
				trials = append(trials, t)
			}
		}
		cores, ok := model.MeasureOf(trials, "neighbour_cores")
		if !ok {
			continue
		}
		line := fmt.Sprintf("%s: asked %d × %.0f%% of a core (%s cores); the neighbours took %.2f cores in all", col, k.Neighbours, 100*k.Intensity(), strconv.FormatFloat(float64(k.Neighbours)*k.Intensity(), 'f', -1, 64), cores.Value)
		if wr, ok := model.MeasureOf(trials, "neighbour_write_rate"); ok {
			line += fmt.Sprintf(" and wrote %s/s to disk", model.FormatBytes(int64(wr.Value)))
		}
		line += " (median per trial)"
		if md {
			fmt.Fprintf(w, "\n- %s\n", mdText(line))
		} else {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

// writeKnobNotes says where a task's knob had nothing to act on.
func (r *Report) writeKnobNotes(w io.Writer, md bool) error {
	if r.Manifest == nil {
		return nil
	}
	for _, te := range r.Manifest.Tasks {
		for _, n := range te.KnobNotes {
			if md {
				fmt.Fprintf(w, "\n- %s: %s\n", mdText(te.Name), mdText(n))
			} else {
				fmt.Fprintf(w, "  %s: %s\n", te.Name, n)
			}
		}
	}
	return nil
}

// comparedLabel names a comparison's column, and its base when that is
// not the analysis's baseline (a knob's column is compared within its
// knob: "3x latency=200ms vs 3x").
func comparedLabel(a *model.Analysis, c model.Comparison) string {
	if c.Base == a.Baseline {
		return c.Other.String()
	}
	return c.Other.String() + " vs " + c.Base.String()
}
