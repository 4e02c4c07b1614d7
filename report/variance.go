package report

import (
	"fmt"
	"io"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// writeVariance writes each task's own variance across its uncapped
// repeats beside what the limits caused, and whether a trial of it
// replays exactly; nothing without uncapped trials.
func (r *Report) writeVariance(w io.Writer, md bool) error {
	vs := model.Variances(r.Trials)
	if len(vs) == 0 {
		return nil
	}
	seeded := map[string]bool{}
	if r.Manifest != nil {
		for _, t := range r.Manifest.Tasks {
			seeded[t.Name] = model.SeededImage(t.Image)
		}
	}
	const intro = "The task's own variance, across its uncapped repeats (nothing limiting it), beside what the limits caused"
	if md {
		fmt.Fprintf(w, "\n## %s\n\n", intro)
	} else {
		fmt.Fprintf(w, "\n%s:\n", intro)
	}
	head := []string{"task · agent", "runs", "peak min–max", "spread", "duration", "failed uncapped (its own)", "failed at a limit", "a rerun"}
	var rows [][]string
	for _, v := range vs {
		replay := "same settings"
		if seeded[v.Task] {
			replay = "exact (seeded)"
		}
		rows = append(rows, []string{v.Task + " · " + v.Agent, fmt.Sprint(v.Runs),
			v.PeaksText(), pct(v.PeakSpread()),
			fmt.Sprintf("%s–%s", v.DurationMin.Round(100*time.Millisecond), v.DurationMax.Round(100*time.Millisecond)),
			fmt.Sprintf("%d/%d", v.UncappedFailed, v.Runs), model.MemoryFailures{Counted: v.Capped, Killed: v.Killed, Stalled: v.Stalled}.String(), replay})
	}
	if err := writeGrid(w, md, head, rows); err != nil {
		return err
	}
	// Where a limit sits inside the task's own range, the verdict says
	// its failures there are the task's variance, not the host's. The
	// trials by cell, once (looking through every trial for each row and
	// ratio was most of a large sweep's report).
	type cellKey struct {
		row   model.RowKey
		ratio model.Ratio
	}
	cells := map[cellKey][]int{}
	for i := range r.Trials {
		t := &r.Trials[i]
		k := cellKey{model.RowKey{Task: t.Task, Agent: t.Agent}, t.Ratio}
		cells[k] = append(cells[k], i)
	}
	for _, v := range vs {
		for _, ratio := range r.Matrix.Ratios {
			if ratio.Uncapped || !ratio.Knobs.IsZero() {
				continue
			}
			var at []model.TrialResult
			var limit int64
			for _, i := range cells[cellKey{model.RowKey{Task: v.Task, Agent: v.Agent}, ratio}] {
				at = append(at, r.Trials[i])
				limit = max(limit, r.Trials[i].Policy.HardLimitBytes)
			}
			if ov, ok := model.OwnVarianceAt(at, limit); ok {
				line := fmt.Sprintf("%s · %s at %s: %s", v.Task, v.Agent, ratio, ov)
				if md {
					fmt.Fprintf(w, "\n- %s\n", mdText(line))
				} else {
					fmt.Fprintf(w, "\n%s\n", line)
				}
			}
		}
	}
	_, err := fmt.Fprintln(w, "\nfailed at a limit: killed by its own limit or stalled at it (the split in brackets). peak: of the runs measured to their end; a run cut off by its time limit reached its peak, not its need (≥ the largest such peak), and is left out of the range. spread: the peaks' range over their median; a limit inside the range kills some runs by the task's own luck. A rerun is exact only where the task's steps draw from the trial's seed (the built-in workload); elsewhere it reruns with the same settings.")
	return err
}
