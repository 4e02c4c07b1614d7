package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// writeNoise splits each ratio's success into quiet and contended trials,
// so a difference between ratios can be told from the neighbours'; nothing
// when no trial has a noise record.
func (r *Report) writeNoise(w io.Writer, md bool) error {
	split, ok := model.SplitByNoise(r.Matrix.Ratios, r.Trials)
	if !ok {
		return nil
	}
	psi, noted, contended, ownWait := 0, 0, 0, 0
	for _, t := range r.Trials {
		if t.Noise == nil || !t.Outcome.Counted() {
			continue
		}
		noted++
		if t.Noise.PSI {
			psi++
		}
		if t.Noise.Contended {
			contended++
		} else if t.Noise.Own != "" {
			ownWait++
		}
	}
	intro := fmt.Sprintf("%d of %d trials ran contended (their threads waited for a CPU ≥%.0f%% of their step time, where that was read; else host CPU pressure ≥%.0f%% during their steps or load above the host's CPUs; or memory pressure ≥%.0f%%)",
		contended, noted, 100*model.ContendedWait, 100*model.ContendedCPUSome, 100*model.ContendedMemorySome)
	if ownWait > 0 {
		// A trial's wait behind its own CPU limit or its own threads
		// beyond its cores is its own (model.SplitCPUWait).
		intro += fmt.Sprintf("; %d more waited as long only behind their own CPU limit and their own threads: their own, not the host's, and counted quiet", ownWait)
	}
	switch psi {
	case noted:
	case 0:
		intro += "; this kernel offers no pressure-stall information (/proc/pressure), so contention was judged by load alone"
	default:
		intro += fmt.Sprintf("; %d had no pressure-stall information and were judged by load alone", noted-psi)
	}
	if contended == noted && noted > 1 {
		// A loaded host flags every trial: the split then separates
		// nothing, and says so rather than suggest the host failed them.
		intro += "; every trial ran contended, so this split cannot tell the host's failures from the limit's: a failure at the limit is judged by the kernel's own evidence (its OOM counter, its peak at the limit), not by the load"
	}
	if md {
		fmt.Fprintf(w, "\n## Quiet vs contended trials\n\n%s.\n\n", intro)
	} else {
		fmt.Fprintf(w, "\nQuiet vs contended trials: %s.\n", intro)
	}
	head := []string{"ratio", "quiet", "contended"}
	var rows [][]string
	rate := func(x model.Rates) string {
		if x.Counted == 0 {
			return model.EmptyCellGlyph
		}
		return fmt.Sprintf("%d/%d %s", x.Successes, x.Counted, pct(x.SuccessRate()))
	}
	for _, s := range split {
		rows = append(rows, []string{s.Ratio.String(), rate(s.Quiet), rate(s.Contended)})
	}
	if err := writeGrid(w, md, head, rows); err != nil {
		return err
	}
	// A failure the host may have caused says by how much.
	// A failure at the trial's own limit (killed by it, stalled at it, or
	// at it when its time ran out) is the limit's, however loaded the
	// host: counted apart, not listed as the host's.
	var lines []string
	own, task := 0, 0
	knobs := map[string]int{} // a knob's column's failures, by its knobs
	everywhere := failedEverywhere(r.Matrix.Ratios, r.Trials)
	for _, t := range r.Trials {
		if n := t.Noise; n != nil && n.Contended && t.Outcome.Counted() && !t.Outcome.Success() {
			if t.ReachedLimit() {
				own++
				continue
			}
			if everywhere[repeatKey{t.Task, t.Agent, t.Repeat}] && t.Outcome == model.Failed {
				// The task's own: it failed so at every ratio, uncapped
				// included, and on a quiet host at least once.
				task++
				continue
			}
			if g := t.Ratio.Knobs.Group(); g != "" {
				// The column's own knob (a time limit, latency, disk
				// cap, neighbours) is what it sweeps: its failure is
				// compared within the knob, not put on the host.
				knobs[model.GroupTitle(g)]++
				continue
			}
			lines = append(lines, fmt.Sprintf("%s %s · %s %s %s: %s — %s", t.ID, t.Task, t.Agent, t.Ratio, t.OutcomeWord(), n.Why, t.Reason))
		}
	}
	if own > 0 {
		fmt.Fprintf(w, "\n%d failure(s) on a contended host were at the trial's own memory limit by the kernel's evidence (killed by it, stalled at it, or at it when its time ran out): the limit's, not the host's.\n", own)
	}
	if task > 0 {
		fmt.Fprintf(w, "\n%d failure(s) on a contended host were the task's own: the same task · agent · repeat failed cleanly (the verifier said no) at every ratio, uncapped included, and on a quiet host at least once, so neither the limit nor the host explains them.\n", task)
	}
	for _, g := range slices.Sorted(maps.Keys(knobs)) {
		fmt.Fprintf(w, "\n%d failure(s) on a contended host were in the columns of a knob (%s): the knob's, compared within it above, not the host's.\n", knobs[g], strings.TrimPrefix(g, "── "))
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nFailures on a contended host the limit does not explain (%d), with how much:\n", len(lines))
	const most = 8
	for i, l := range lines {
		if i == most {
			fmt.Fprintf(w, "  … and %d more (--format json has every trial's noise)\n", len(lines)-most)
			break
		}
		if md {
			fmt.Fprintf(w, "- %s\n", mdText(l))
		} else {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	return nil
}

// repeatKey is one repeat of a task · agent, across the ratios.
type repeatKey struct {
	task, agent string
	repeat      int
}

// failedEverywhere is the repeats that failed cleanly (model.Failed: the
// verifier said no, no kill, no timeout) at every ratio of the sweep,
// uncapped included, where it ran two or more (a knob's columns are
// judged within their knob), at least once on a quiet host. A seeded
// repeat failing its own fit step at 1x, 2x and uncapped was listed among
// "Failures on a contended host the limit does not explain", as if the
// host might have; where every one of its runs was contended, it might.
func failedEverywhere(ratios []model.Ratio, trials []model.TrialResult) map[repeatKey]bool {
	var plain []model.Ratio
	for _, r := range ratios {
		if r.Knobs.IsZero() {
			plain = append(plain, r)
		}
	}
	if len(plain) < 2 || !slices.ContainsFunc(plain, func(r model.Ratio) bool { return r.Uncapped }) {
		return nil
	}
	failed := map[repeatKey]map[model.Ratio]bool{}
	passed, quiet := map[repeatKey]bool{}, map[repeatKey]bool{}
	for _, t := range trials {
		if !t.Ratio.Knobs.IsZero() || !t.Outcome.Counted() {
			continue
		}
		k := repeatKey{t.Task, t.Agent, t.Repeat}
		if t.Outcome != model.Failed {
			passed[k] = true // or failed otherwise: not the same failure
			continue
		}
		if failed[k] == nil {
			failed[k] = map[model.Ratio]bool{}
		}
		failed[k][t.Ratio] = true
		quiet[k] = quiet[k] || t.Noise == nil || !t.Noise.Contended
	}
	out := map[repeatKey]bool{}
	for k, at := range failed {
		// Failed so on a quiet host at least once: a host contended at
		// every ratio could explain every one of them (a new user's
		// cpu-deadline-tests waited 13.6 s for a CPU uncapped, and was
		// called the task's own).
		if !passed[k] && len(at) == len(plain) && quiet[k] {
			out[k] = true
		}
	}
	return out
}
