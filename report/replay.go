package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// ReplayLegend says what the replay section's cells and counts mean.
const ReplayLegend = "Each row is one recorded trial of another harness replayed action by action (headroom replay): the same actions in every cell, so a recorded pass killed here (or an infra error) is the machine's doing, not the model's luck (a machine failure by construction). A recorded pass that fails its verifier here is the task's verdict on the same actions; where it fails with nothing limiting it too, its actions do not replay deterministically (they depend on chance, the clock or the network), and its failures are no one ratio's. A cell: each replay's outcome and the first action where it parted from the recording."

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
	// A recorded pass that fails cleanly where nothing limits it does not
	// replay: its failures under the limits are not the machine's by
	// construction (the twenty-fifth attacker's 2: a coin-flip action
	// failed 6 of 6 at 1x and 4 of 6 uncapped, all "machine failures").
	widest := r.Matrix.Ratios[len(r.Matrix.Ratios)-1]
	var unreplayable []string
	for _, name := range names {
		if recorded[name] != "passed" || !widest.Uncapped {
			continue
		}
		n, own := 0, 0
		past := ""
		for _, t := range cells[name][widest.String()] {
			if t.Outcome.Counted() {
				n++
				if !t.Outcome.Success() && !t.Outcome.InfraFailure() {
					own++
				}
			}
			if t.Replay != nil && strings.Contains(t.Replay.ThinkCapped, "every replay times out") {
				past = t.Replay.ThinkCapped
			}
		}
		if own > 0 && past != "" {
			// The think time given, not the actions (the twenty-ninth
			// attacker's 4).
			unreplayable = append(unreplayable, fmt.Sprintf("%s: %d of %d replays failed uncapped too: %s; not its actions' doing, nor the machine's", name, own, n, past))
			continue
		}
		if own > 0 {
			// Or the task is not the one recorded: a changed verifier
			// read as non-determinism (the twenty-sixth attacker's 4).
			src := ""
			if r.Manifest != nil {
				for _, e := range r.Manifest.Tasks {
					if e.Name == name {
						src = cmp.Or(e.SourcePath, e.Source)
					}
				}
			}
			line := fmt.Sprintf("%s: %d of %d replays failed uncapped too, with nothing limiting them: its actions do not replay deterministically here, or the task", name, own, n)
			if src != "" {
				line += " (" + src + ")"
			}
			unreplayable = append(unreplayable, line+" is not the one recorded; either way its failures are not the machine's by construction")
		}
	}
	for _, ratio := range r.Matrix.Ratios {
		passes, machine, own := 0, 0, 0
		ownWords := map[model.Outcome]int{}
		for _, name := range names {
			if recorded[name] != "passed" {
				continue
			}
			for _, t := range cells[name][ratio.String()] {
				if !t.Outcome.Counted() {
					continue
				}
				passes++
				switch {
				case t.Outcome.InfraFailure():
					machine++
				case !t.Outcome.Success():
					own++
					ownWords[t.Outcome]++
				}
			}
		}
		if passes == 0 {
			continue
		}
		line := fmt.Sprintf("at %s: %d of %d replays of recorded passes failed here", ratio, machine+own, passes)
		switch {
		case machine+own == 0:
		case own == 0:
			line += ": machine failures by construction (killed, or an infra error)"
		case machine == 0:
			line += ": the task's verdict on the same actions (" + outcomeCounts(ownWords) + "), none killed: not the machine's by construction"
		default:
			line += fmt.Sprintf(": %d the machine's by construction (killed, or an infra error), %d the task's verdict on the same actions (%s)", machine, own, outcomeCounts(ownWords))
		}
		fmt.Fprintln(w, line)
	}
	for _, line := range unreplayable {
		if md {
			line = mdText(line)
		}
		fmt.Fprintln(w, line)
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

// outcomeCounts says what outcomes there were, by count ("2 failed, 1
// timeout"): the line said "(failed, timed out)" whatever they were.
func outcomeCounts(n map[model.Outcome]int) string {
	var out []string
	for _, o := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%d %s", n[o], o))
	}
	return strings.Join(out, ", ")
}
