package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
)

// WriteCalibration writes the memory recommendations per task · agent,
// what a run is for each (replayed or drawn), and where the runs are too
// few for what they are asked.
func WriteCalibration(w io.Writer, id string, cals []model.Calibration, tgt, mg float64) {
	fmt.Fprintf(w, "Calibration of %s: target share failing at the limit %s, margin %s\n\n", id, percent(tgt), percent(mg))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task · agent\tspec\trepeats\truns\tneed p50 (95% CI)\tneed max\tfailed at the limit by ratio\tverdict\tguarantee\tlimit\tfail rate at limit\t")
	for _, c := range cals {
		var kills []string
		for _, k := range c.Kills {
			s := fmt.Sprintf("%s %d/%d", k.Ratio, k.Failed(), k.Trials)
			if k.Stalled > 0 {
				s += fmt.Sprintf(" (%d stalled)", k.Stalled)
			}
			kills = append(kills, s)
		}
		p50, pmax := "-", "-"
		if c.MedianBytes > 0 {
			p50 = model.FormatBytes(c.MedianBytes)
		} else if len(c.MedianCI) == 2 {
			p50 = "unknown" // more than half censored: the interval stands
		}
		if len(c.MedianCI) == 2 {
			p50 += " (" + medianCIText(c.MedianCI) + ")"
		}
		if c.Censored > 0 {
			p50 += fmt.Sprintf(" [%d of %d censored]", c.Censored, c.Runs())
		}
		if n := len(c.NeedBytes); n > 0 {
			pmax = model.FormatBytes(c.NeedBytes[n-1])
		}
		if c.CutOffAboveBytes > 0 && (len(c.NeedBytes) == 0 || c.CutOffAboveBytes > c.NeedBytes[len(c.NeedBytes)-1]) {
			pmax = "≥" + model.FormatBytes(c.CutOffAboveBytes) // a run cut off by time got further
		}
		runs := fmt.Sprint(c.Runs())
		if c.Censored > 0 {
			runs += " (" + c.CensoredText() + ")"
		}
		g, l, rate := "-", "-", "-"
		if c.Verdict != "unknown" {
			g, l = model.FormatBytes(c.GuaranteeBytes), fmt.Sprintf("%s (%.2gx spec)", model.FormatBytes(c.LimitBytes), c.LimitRatio())
			rate = fmt.Sprintf("%d/%d over, ≤%s", c.Exceeding, c.Runs(), percent(c.KillRateCI.Hi))
		}
		fmt.Fprintf(tw, "%s · %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Task, c.Agent, model.FormatBytes(c.SpecBytes), c.Repeats, runs, p50, pmax, strings.Join(kills, ", "), c.Verdict, g, l, rate)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nneed: each run's peak, the larger of the 20 Hz samples and the kernel's own step peaks; p50 by Kaplan–Meier over measured runs and censored ones (failed at a limit: need > that limit; cut off by a time limit, a pass after its agent's timeout included: need ≥ the peak it reached), [k of n censored] beside it; the limit's quantile the same with each cut-off run taken to need more than any measured (time cuts off the big needs first), so cut-off runs above the target's share leave it unknown · repeats: replayed = the task draws its sizes from the trial's seed, so repeat r is one trajectory at every ratio and its uncapped run measures its killed one; drawn = each run draws its own size, every trial is one sample · keep: the spec covers the runs · raise / lower: use the recommendation · unknown: too many runs failed at their limit to place the limit's quantile (the line below says how many, and what to sweep) · p50's interval: a censored run counts at its bound for the low end and as unbounded for the high end (? where that leaves it open)")
	if runs := model.RunsForKillRate(tgt); runs > 0 {
		fmt.Fprintf(w, "fail rate at limit: runs estimated to need more than the limit, and the Wilson 95%% upper bound of the rate that implies; showing %s takes %d runs with none over the limit (exact binomial, 95%%)\n", percent(tgt), runs)
	}
	for _, c := range cals {
		if c.Verdict == "unknown" {
			continue
		}
		if c.TooFew() && c.Repeats == model.RepeatsDrawn {
			fmt.Fprintf(w, "%s · %s: %d runs of a task not replayed from a seed (each run its own sample, whether or not its need varies) are too few to show a %s fail rate at %s: about %d runs, none over it, would; as measured it is ≤%s (Wilson 95%%)\n",
				c.Task, c.Agent, c.Runs(), percent(tgt), model.FormatBytes(c.LimitBytes), c.RunsForTarget, percent(c.KillRateCI.Hi))
		}
		if c.RunsForMedian > 0 {
			fmt.Fprintf(w, "%s · %s: the median need is known only within %s from %d runs: about %d runs would place it within ±10%%, and the guarantee with it\n",
				c.Task, c.Agent, medianCIText(c.MedianCI), c.Runs(), c.RunsForMedian)
		}
	}
	for _, c := range cals {
		if c.Verdict == "unknown" {
			fmt.Fprintf(w, "%s · %s: no limit recommended: %s\n", c.Task, c.Agent, c.UnknownWhy())
		}
	}
}

// medianCIText is a median's interval, "288MiB–312MiB", or "288MiB–?"
// where runs that failed at their limit leave its high end open.
func medianCIText(ci []int64) string {
	if ci[1] == 0 {
		return model.FormatBytes(ci[0]) + "–?"
	}
	return model.FormatBytes(ci[0]) + "–" + model.FormatBytes(ci[1])
}

// percent prints a rate as a percentage with the precision it was given
// (0.1%, not 0%).
func percent(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }

// WriteCPUCalibration writes the CPU recommendations, from the throttling
// each tested CPU limit caused; nothing when no trial recorded its CPU.
// Trials that ran contended are left out (the host held them back, not the
// limit), and said so; the uncapped column shows only where uncapped steps
// were read.
func WriteCPUCalibration(w io.Writer, cals []model.CPUCalibration) {
	if len(cals) == 0 {
		return
	}
	uncapped := false
	for _, c := range cals {
		uncapped = uncapped || len(c.NeedCores) > 0
	}
	fmt.Fprintln(w, "\nCPUs, from the throttling seen:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"task", "spec", "throttled by ratio (passed)"}
	if uncapped {
		head = append(head, "uncapped busiest step")
	}
	fmt.Fprintln(tw, strings.Join(append(head, "verdict", "cpus", ""), "\t"))
	var notes []string
	for _, c := range cals {
		var thr []string
		for _, t := range c.Throttled {
			thr = append(thr, fmt.Sprintf("%s %s (%d/%d)", t.Ratio, percent(t.CPU.ThrottledShare()), t.Passed, t.Trials))
		}
		if len(thr) == 0 {
			thr = []string{"-"}
		}
		cols := []string{c.Task, strconv.FormatFloat(c.SpecCPUs, 'f', -1, 64), strings.Join(thr, ", ")}
		if uncapped {
			need := "-"
			if n := len(c.NeedCores); n > 0 {
				need = fmt.Sprintf("%.2f–%.2f cores", c.NeedCores[0], c.NeedCores[n-1])
			}
			cols = append(cols, need)
		}
		rec, verdict := "-", c.Verdict
		if c.Verdict != "unknown" {
			rec = strconv.FormatFloat(c.CPUs, 'f', -1, 64)
			if c.HostCapped {
				rec += " (the host's all)"
			}
		} else if c.Contended > c.Read {
			verdict = "unknown (contended)"
		}
		fmt.Fprintln(tw, strings.Join(append(cols, verdict, rec, ""), "\t"))
		if c.ShortStepShare > model.ShortStepMost {
			notes = append(notes, fmt.Sprintf("%s: up to %.0f%% of an uncapped run's CPU time was in steps shorter than 1s, whose cores cannot be read: not lowered", c.Task, 100*c.ShortStepShare))
		}
		if c.Contended > 0 {
			what := "the advice stands on the other %d"
			if c.Contended > c.Read {
				what = "no CPU advice from the %d quiet one(s): sweep on a quiet host (`headroom doctor` warns of load)"
			}
			notes = append(notes, fmt.Sprintf("%s: %d of %d runs ran contended and are left out (the host's load held them back, so their cores and throttling are the host's, not the task's); "+what,
				c.Task, c.Contended, c.Contended+c.Read, c.Read))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "throttled: share of CFS periods the limit stopped the task in; the recommendation is the smallest limit tried that throttled it in at most 5% of them, else what its uncapped runs used (plus margin), read from steps of at least 1s (a shorter step's cores are a clock tick's rounding) and never more than the host's CPUs; lowered when the spec went unthrottled and the need is under 75% of it, and at most 10% of a run's CPU time was in steps too short to read. Runs that ran contended are not read. Failures under a limit that did not throttle come from elsewhere: the host's own load (report's quiet vs contended trials) or the task")
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}
