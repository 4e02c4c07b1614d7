package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

func newCalibrateCmd() *cobra.Command {
	var out, target, margin string
	var write bool
	var writeTo string
	cmd := &cobra.Command{
		Use:   "calibrate EXP",
		Short: "Recommend each task's guarantee and hard limit from the peaks an experiment recorded",
		Long: `calibrate reads an experiment's trials and recommends, per task · agent, the
smallest hard limit that would have kept memory failures (killed at the
limit, or stalled at it) at or below --target, plus --margin, and a
guarantee covering the median run. A task whose steps draw every size from
the trial's seed (the built-in workload) replays a repeat at every ratio,
so an uncapped run measures what its killed 1x run needed; any other task
draws its size afresh each run, and every trial is one sample of its need
(a failed one says only that its need passed its limit). Sweep with
uncapped among the ratios.

--write writes the recommendation into the task's own file, as the file's
fields mean it: a Terminal-Bench 2.0 / Harbor task.toml has one memory
field (memory_mb), which is the whole spec and so the 1x hard limit: it
gets the recommended limit; a headroom TOML gets the guarantee (memory)
and the limit (memory_limit) both. --write-to PATH writes that edited file to
PATH instead, leaving the task's own file as it was (one task at a time).`,
		Args: argsFor(1, 1, experimentArg),
		RunE: func(cmd *cobra.Command, args []string) error {
			if writeTo != "" {
				write = true
			}
			tgt, err := parsePP("target", target)
			if err != nil {
				return err
			}
			if tgt <= 0 || tgt >= 1 {
				// No count of runs shows a rate of exactly 0, and at 100% any
				// limit will do: neither has a limit to recommend.
				return usagef("--target must be more than 0 and less than 100%% of runs failing at the limit, e.g. 1%% (got %q)", target)
			}
			mg, err := parsePP("margin", margin)
			if err != nil {
				return err
			}
			_, m, trials, err := loadExperiment(args[0], out, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			specs := map[string]int64{}
			cpus := map[string]float64{}
			seeded := map[string]bool{}
			entries := map[string]store.TaskEntry{}
			for _, t := range m.Tasks {
				specs[t.Name] = t.Resources.MemoryBytes
				cpus[t.Name] = t.Resources.CPUs
				seeded[t.Name] = model.SeededImage(t.Image)
				entries[t.Name] = t
			}
			cals := model.Calibrate(trials, specs, seeded, tgt, mg)
			w := cmd.OutOrStdout()
			writeCalibration(w, m.ID, cals, tgt, mg)
			writeCPUCalibration(w, model.CalibrateCPU(trials, cpus, m.Host.CPUs, tgt, mg))
			cancelled := map[string]int{}
			for _, c := range cals {
				cancelled[c.Task] += c.Cancelled
			}
			for _, c := range cals {
				if n := cancelled[c.Task]; n > 0 {
					cancelled[c.Task] = 0
					trial := "trial is"
					if n > 1 {
						trial = "trials are"
					}
					fmt.Fprintf(w, "%s: %d cancelled %s not evidence; `%s` runs them\n", c.Task, n, trial, resumeCommand(m.ID, out))
				}
			}
			if tasks := calibratedTasks(cals); writeTo != "" && len(tasks) != 1 {
				return usagef("--write-to takes one task's file; %s calibrates %d tasks (%s): use --write to write each into its own file", m.ID, len(tasks), strings.Join(tasks, ", "))
			}
			failed := 0
			for _, task := range calibratedTasks(cals) {
				rec, why := taskRecommendation(cals, task)
				if why != "" {
					fmt.Fprintf(w, "\n# %s: not written: %s\n", task, why)
					continue
				}
				if rec.Verdict == "keep" {
					continue
				}
				src := entries[task].Source
				edit, err := memoryEdit(src, entries[task].Format, rec, m.ID)
				if err == nil {
					fmt.Fprintf(w, "\n# %s (%s), from %d runs: %s\n[environment]\n%s\n", task, src, rec.Runs(), edit.what, strings.Join(edit.lines, "\n"))
				} else {
					fmt.Fprintf(w, "\n# %s (%s), from %d runs\n[environment]\nmemory = %q\nmemory_limit = %q\n", task, src, rec.Runs(), memString(rec.GuaranteeBytes), memString(rec.LimitBytes))
				}
				if !write {
					continue
				}
				if err == nil && writeTo != "" {
					// The edited file, in the task file's own format,
					// elsewhere: the task's own file is left as it was.
					edit.path = writeTo
				}
				if err == nil {
					err = edit.write()
				}
				if err != nil {
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "not written: %v\n", err)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %s\n", edit.path, edit.what)
				}
			}
			if failed > 0 {
				return fmt.Errorf("calibrate --write: %s not written (above); the others were", model.Quantity(failed, "task file"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	cmd.Flags().StringVar(&target, "target", "1%", "highest acceptable share of runs failing at the limit (killed or stalled)")
	cmd.Flags().StringVar(&margin, "margin", "10%", "headroom added on top of the measured need")
	cmd.Flags().StringVar(&writeTo, "write-to", "", "write the edited task file here instead of over the task's own (one task; same format as its file: a Harbor task.toml stays one, a headroom TOML one); implies --write")
	cmd.Flags().BoolVar(&write, "write", false, "write the recommendation into the tasks' own files as their fields mean it (Harbor memory_mb: the limit; headroom TOML: memory and memory_limit); not built-in tasks")
	return cmd
}

// writeCalibration writes the memory recommendations per task · agent,
// what a run is for each (replayed or drawn), and where the runs are too
// few for what they are asked.
func writeCalibration(w io.Writer, id string, cals []model.Calibration, tgt, mg float64) {
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
			fmt.Fprintf(w, "%s · %s: %d runs of a task that draws its size each run are too few to show a %s fail rate at %s: about %d runs, none over it, would; as measured it is ≤%s (Wilson 95%%)\n",
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

// medianNote is the median as a task file's comment keeps it, with the
// runs it stands on when some were censored: "306MiB (Kaplan–Meier, 3 of
// 20 runs censored)".
func medianNote(c model.Calibration) string {
	if c.Censored == 0 {
		return model.FormatBytes(c.MedianBytes)
	}
	return fmt.Sprintf("%s (Kaplan–Meier, %d of %d runs censored)", model.FormatBytes(c.MedianBytes), c.Censored, c.Runs())
}

// medianCIText is a median's interval, "288MiB–312MiB", or "288MiB–?"
// where runs that failed at their limit leave its high end open.
func medianCIText(ci []int64) string {
	if ci[1] == 0 {
		return model.FormatBytes(ci[0]) + "–?"
	}
	return model.FormatBytes(ci[0]) + "–" + model.FormatBytes(ci[1])
}

// calibratedTasks lists the tasks of cals in order, once each.
func calibratedTasks(cals []model.Calibration) []string {
	var out []string
	for _, c := range cals {
		if len(out) == 0 || out[len(out)-1] != c.Task {
			out = append(out, c.Task)
		}
	}
	return out
}

// taskRecommendation is what one task file gets: its file holds one spec
// for all its agents, so the largest guarantee and limit among them (each
// agent's need stays in the table); why says why nothing is written.
func taskRecommendation(cals []model.Calibration, task string) (model.Calibration, string) {
	var rec model.Calibration
	found := false
	for _, c := range cals {
		if c.Task != task {
			continue
		}
		if c.Verdict == "unknown" {
			return rec, fmt.Sprintf("agent %s: no limit recommended: %s", c.Agent, c.UnknownWhy())
		}
		if !found || c.LimitBytes > rec.LimitBytes {
			g := max(rec.GuaranteeBytes, c.GuaranteeBytes)
			rec = c
			rec.GuaranteeBytes = g
		} else {
			rec.GuaranteeBytes = max(rec.GuaranteeBytes, c.GuaranteeBytes)
		}
		found = true
	}
	switch {
	case rec.LimitBytes > rec.SpecBytes:
		rec.Verdict = "raise"
	case rec.LimitBytes < rec.SpecBytes:
		rec.Verdict = "lower"
	default:
		rec.Verdict = "keep"
	}
	return rec, ""
}

func memString(b int64) string { return fmt.Sprintf("%dM", (b+model.MiB-1)/model.MiB) }

// percent prints a rate as a percentage with the precision it was given
// (0.1%, not 0%).
func percent(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }

var (
	environmentHeader = regexp.MustCompile(`(?m)^[ \t]*\[environment\][ \t]*(#.*)?$`)
	tableHeader       = regexp.MustCompile(`(?m)^[ \t]*\[`)
)

// fileEdit is a task file's new contents, checked to load.
type fileEdit struct {
	path  string
	data  []byte
	lines []string // the memory lines as written
	what  string   // what was written, and why
}

func (e fileEdit) write() error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(e.path); err == nil {
		mode = st.Mode().Perm()
	}
	return os.WriteFile(e.path, e.data, mode)
}

// memoryEdit writes a recommendation into the file a task came from, as
// the file's fields mean it, in the form the file already uses (memory_mb
// = 208 or memory = "208M"), keeping every other line, and checks that the
// result loads as the same kind of task:
//   - a Harbor task.toml (and any file of a format with one memory field)
//     gets the recommended limit: its memory_mb is the whole spec, which
//     the 1x ratio makes the hard limit;
//   - a headroom TOML gets the guarantee (memory) and the limit
//     (memory_limit) both.
func memoryEdit(path, format string, c model.Calibration, exp string) (fileEdit, error) {
	if path == "" || strings.HasPrefix(path, "builtin:") {
		return fileEdit{}, fmt.Errorf("%s is a built-in task; copy its file into a --tasks-dir to change it", c.Task)
	}
	if filepath.Base(path) == "task.yaml" {
		return fileEdit{}, fmt.Errorf("%s: terminal-bench's task.yaml has no memory field; set the limit where the task runs, or move the task to a task.toml", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fileEdit{}, err
	}
	if format == "" && filepath.Base(path) == "task.toml" {
		format = model.FormatHarbor
	}
	text := string(data)
	e := fileEdit{path: path}
	verb := "raised"
	if c.LimitBytes < c.SpecBytes {
		verb = "lowered"
	}
	if format != model.FormatHeadroom {
		// One memory field: the 1x limit.
		note := fmt.Sprintf("  # headroom calibrate %s: the 1x hard limit (memory_mb is the whole spec), %s from %s; median need %s", exp, verb, model.FormatBytes(c.SpecBytes), medianNote(c))
		text, line := setEnvironmentKey(text, []string{"memory_mb", "memory"}, "memory_mb", c.LimitBytes, note)
		e.data, e.lines = []byte(text), []string{line}
		e.what = fmt.Sprintf("the recommended hard limit %s, %s from %s (its one memory field is the whole spec, hence the 1x limit; a sweep at 1x now runs with this limit)", model.FormatBytes(c.LimitBytes), verb, model.FormatBytes(c.SpecBytes))
	} else {
		gNote := fmt.Sprintf("  # headroom calibrate %s: guarantee (median need %s)", exp, medianNote(c))
		lNote := fmt.Sprintf("  # headroom calibrate %s: the 1x hard limit, %s from %s", exp, verb, model.FormatBytes(c.SpecBytes))
		var gLine, lLine string
		text, gLine = setEnvironmentKey(text, []string{"memory_mb", "memory"}, "memory", c.GuaranteeBytes, gNote)
		text, lLine = setEnvironmentKey(text, []string{"memory_limit"}, "memory_limit", c.LimitBytes, lNote)
		e.data, e.lines = []byte(text), []string{gLine, lLine}
		e.what = fmt.Sprintf("guarantee %s and hard limit %s (memory and memory_limit; a sweep's ratios now scale the limit)", model.FormatBytes(c.GuaranteeBytes), model.FormatBytes(c.LimitBytes))
	}
	if _, err := taskfile.ParseSource(path, e.data); err != nil {
		return fileEdit{}, fmt.Errorf("the edited file would not load (%v); left unchanged", err)
	}
	return e, nil
}

// setEnvironmentKey sets the first of keys found in [environment] (or adds
// key, or an [environment] table, when none is there) to bytes, written
// in the form of the key found (memory_mb: whole MiB; others: "208M"),
// keeping the line's indent and the user's own comment (a previous
// calibration's note is replaced by note). It returns the text and the
// line as written.
func setEnvironmentKey(text string, keys []string, key string, bytes int64, note string) (string, string) {
	value := func(k string) string {
		if k == "memory_mb" {
			return fmt.Sprint((bytes + model.MiB - 1) / model.MiB)
		}
		return strconv.Quote(memString(bytes))
	}
	h := environmentHeader.FindStringIndex(text)
	if h == nil {
		line := key + " = " + value(key) + note
		return strings.TrimRight(text, "\n") + "\n\n[environment]\n" + line + "\n", line
	}
	start, end := h[1], len(text)
	if next := tableHeader.FindStringIndex(text[start:]); next != nil {
		end = start + next[0]
	}
	section := text[start:end]
	re := regexp.MustCompile(`(?m)^([ \t]*)(` + strings.Join(keys, "|") + `)([ \t]*=[ \t]*)([^#\n]*?)([ \t]*#[^\n]*)?$`)
	if m := re.FindStringSubmatchIndex(section); m != nil {
		indent, k, eq := section[m[2]:m[3]], section[m[4]:m[5]], section[m[6]:m[7]]
		comment := note
		if m[10] >= 0 && !strings.Contains(section[m[10]:m[11]], "# headroom calibrate") {
			comment = section[m[10]:m[11]] // the user's own comment stays
		}
		line := indent + k + eq + value(k) + comment
		return text[:start] + section[:m[0]] + line + section[m[1]:] + text[end:], strings.TrimSpace(line)
	}
	line := key + " = " + value(key) + note
	return text[:start] + "\n" + line + text[start:], line
}

// writeCPUCalibration writes the CPU recommendations, from the throttling
// each tested CPU limit caused; nothing when no trial recorded its CPU.
// Trials that ran contended are left out (the host held them back, not the
// limit), and said so; the uncapped column shows only where uncapped steps
// were read.
func writeCPUCalibration(w io.Writer, cals []model.CPUCalibration) {
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
	fmt.Fprintln(w, "throttled: share of CFS periods the limit stopped the task in; the recommendation is the smallest limit tried that throttled it in at most 5% of them, else what its uncapped runs used (plus margin), read from steps of at least 1s (a shorter step's cores are a clock tick's rounding) and never more than the host's CPUs; lowered when the spec went unthrottled and the need is under 75% of it. Runs that ran contended are not read. Failures under a limit that did not throttle come from elsewhere: the host's own load (report's quiet vs contended trials) or the task")
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}
