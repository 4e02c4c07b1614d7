package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// ReplayLegend says what the replay section's cells and counts mean.
const ReplayLegend = "Each row is one recorded trial of another harness replayed action by action (headroom replay): the same actions in every cell, so a recorded pass that fails here is the machine's doing, not the model's luck (a machine failure by construction). A cell: each replay's outcome and the first action where it parted from the recording."

// replayRows are the replayed trials by trajectory (task) and column.
func (r *Report) replayRows() (names []string, cells map[string]map[string][]model.TrialResult, recorded map[string]string) {
	cells, recorded = map[string]map[string][]model.TrialResult{}, map[string]string{}
	for _, t := range r.Trials {
		if t.Replay == nil || t.TaskNotRun {
			continue
		}
		if cells[t.Task] == nil {
			cells[t.Task] = map[string][]model.TrialResult{}
			names = append(names, t.Task)
		}
		col := t.Ratio.String()
		cells[t.Task][col] = append(cells[t.Task][col], t)
		recorded[t.Task] = t.Replay.RecordedOutcome
	}
	sort.Strings(names)
	return names, cells, recorded
}

// writeReplay writes, for replayed trials, the trajectories × ratios
// matrix with each cell's first divergence, and per ratio how many
// recorded passes fail here; nothing when no trial is a replay.
func (r *Report) writeReplay(w io.Writer, md bool) error {
	names, cells, recorded := r.replayRows()
	if len(names) == 0 {
		return nil
	}
	const title = "Replayed recordings: the same actions under each ratio"
	if md {
		fmt.Fprintf(w, "\n## %s\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s:\n", title)
	}
	head := []string{"recorded trial", "recorded"}
	for _, ratio := range r.Matrix.Ratios {
		head = append(head, ratio.String())
	}
	var rows [][]string
	for _, name := range names {
		verdict := recorded[name]
		if verdict == "" {
			verdict = "no verdict"
		}
		row := []string{name, verdict}
		for _, ratio := range r.Matrix.Ratios {
			var parts []string
			for _, t := range cells[name][ratio.String()] {
				parts = append(parts, replayCell(t))
			}
			row = append(row, strings.Join(parts, "; "))
		}
		rows = append(rows, row)
	}
	if err := writeGrid(w, md, head, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, ratio := range r.Matrix.Ratios {
		passes, failed := 0, 0
		for _, name := range names {
			if recorded[name] != "passed" {
				continue
			}
			for _, t := range cells[name][ratio.String()] {
				if !t.Outcome.Counted() {
					continue
				}
				passes++
				if !t.Outcome.Success() {
					failed++
				}
			}
		}
		if passes > 0 {
			fmt.Fprintf(w, "at %s: %d of %d replays of recorded passes failed here: machine failures by construction\n", ratio, failed, passes)
		}
	}
	for _, name := range names {
		for _, ratio := range r.Matrix.Ratios {
			ts := cells[name][ratio.String()]
			if len(ts) > 0 && ts[0].Replay.Divergence != nil && ts[0].Replay.Divergence.Kind != model.DivergedOutput {
				line := fmt.Sprintf("%s: %s", name, ts[0].Replay.Sentence(ratio.String()))
				if md {
					line = mdText(line)
				}
				fmt.Fprintln(w, line)
				break
			}
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", ReplayLegend)
	return err
}

// replayCell is one replay as a cell says it: "oom-killed at 2/3",
// "passed" (followed the recording), "failed, output at 5/9".
func replayCell(t model.TrialResult) string {
	d := t.Replay.Divergence
	switch {
	case d == nil:
		return string(t.Outcome)
	case d.Kind == model.DivergedOOM || d.Kind == model.DivergedTimeout:
		return fmt.Sprintf("%s at %d/%d", t.Outcome, d.Action, t.Replay.Actions)
	}
	return fmt.Sprintf("%s, %s at %d/%d", t.Outcome, d.Kind, d.Action, t.Replay.Actions)
}
