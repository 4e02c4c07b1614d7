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
	cmd := &cobra.Command{
		Use:   "calibrate EXP",
		Short: "Recommend each task's guarantee and hard limit from the peaks an experiment recorded",
		Long: `calibrate reads an experiment's trials and recommends, per task, the
smallest hard limit that would have kept OOM kills at or below --target,
plus --margin, and a guarantee covering the median run. Repeats share their
seed across ratios, so a run killed at 1x is measured by the same
trajectory's uncapped run: sweep with uncapped among the ratios.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tgt, err := parsePP("target", target)
			if err != nil {
				return err
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
			sources := map[string]string{}
			for _, t := range m.Tasks {
				specs[t.Name] = t.Resources.MemoryBytes
				cpus[t.Name] = t.Resources.CPUs
				sources[t.Name] = t.Source
			}
			cals := model.Calibrate(trials, specs, tgt, mg)
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Calibration of %s: target kill rate %s, margin %s\n\n", m.ID, percent(tgt), percent(mg))
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "task\tspec\truns\tneed p50\tneed max\tkills by ratio\tverdict\tguarantee\tlimit\tkill rate at limit\t")
			for _, c := range cals {
				var kills []string
				for _, k := range c.Kills {
					kills = append(kills, fmt.Sprintf("%s %d/%d", k.Ratio, k.Killed, k.Trials))
				}
				p50, pmax := "-", "-"
				if n := len(c.NeedBytes); n > 0 {
					p50, pmax = model.FormatBytes(c.NeedBytes[(n-1)/2]), model.FormatBytes(c.NeedBytes[n-1])
				}
				runs := fmt.Sprint(len(c.NeedBytes))
				if c.Censored > 0 {
					runs += fmt.Sprintf(" (+%d killed wherever it finished, need > %s)", c.Censored, model.FormatBytes(c.CensoredAboveBytes))
				}
				g, l, rate := "-", "-", "-"
				if c.Verdict != "unknown" {
					g, l = model.FormatBytes(c.GuaranteeBytes), fmt.Sprintf("%s (%.2gx spec)", model.FormatBytes(c.LimitBytes), c.LimitRatio())
					rate = fmt.Sprintf("%d/%d over, ≤%s", c.Exceeding, len(c.NeedBytes)+c.Censored, percent(c.KillRateCI.Hi))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Task, model.FormatBytes(c.SpecBytes), runs, p50, pmax, strings.Join(kills, ", "), c.Verdict, g, l, rate)
			}
			tw.Flush()
			fmt.Fprintln(w, "\nneed: each run's peak, the larger of the 20 Hz samples and the kernel's own step peaks · keep: the spec covers every run · raise / lower: use the recommendation · unknown: too many runs were killed at every ratio where they finished; sweep again with uncapped")
			if runs := model.RunsForKillRate(tgt); runs > 0 {
				fmt.Fprintf(w, "kill rate at limit: runs that needed more than the limit, and the Wilson 95%% upper bound of the kill rate that implies; showing %s takes %d runs with none over the limit (exact binomial, 95%%)\n", percent(tgt), runs)
			}
			writeCPUCalibration(w, model.CalibrateCPU(trials, cpus, tgt, mg))
			for _, c := range cals {
				if c.Cancelled > 0 {
					trial := "trial is"
					if c.Cancelled > 1 {
						trial = "trials are"
					}
					fmt.Fprintf(w, "%s: %d cancelled %s not evidence; `%s` runs them\n", c.Task, c.Cancelled, trial, resumeCommand(m.ID, out))
				}
			}
			failed := 0
			for _, c := range cals {
				if c.Verdict != "raise" {
					continue
				}
				src := sources[c.Task]
				edit, err := memoryEdit(src, c, m.ID)
				line := "memory = " + strconv.Quote(memString(c.GuaranteeBytes))
				if err == nil {
					line = edit.line
				}
				fmt.Fprintf(w, "\n# %s (%s), from %d runs\n[environment]\n%s\n", c.Task, src, len(c.NeedBytes), line)
				if !write {
					continue
				}
				if err == nil {
					err = edit.write()
				}
				if err != nil {
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "not written: %v\n", err)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", src)
				}
			}
			if failed > 0 {
				return fmt.Errorf("calibrate --write: %d task file(s) not written (above); the others were", failed)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	cmd.Flags().StringVar(&target, "target", "1%", "highest acceptable OOM kill rate")
	cmd.Flags().StringVar(&margin, "margin", "10%", "headroom added on top of the measured need")
	cmd.Flags().BoolVar(&write, "write", false, "write the recommended guarantee into the tasks' own files (not built-in tasks)")
	return cmd
}

func memString(b int64) string { return fmt.Sprintf("%dM", (b+model.MiB-1)/model.MiB) }

// percent prints a rate as a percentage with the precision it was given
// (0.1%, not 0%).
func percent(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }

var (
	environmentHeader = regexp.MustCompile(`(?m)^[ \t]*\[environment\][ \t]*(#.*)?$`)
	tableHeader       = regexp.MustCompile(`(?m)^[ \t]*\[`)
	memoryKey         = regexp.MustCompile(`(?m)^([ \t]*)(memory_mb|memory)([ \t]*=[ \t]*)([^#\n]*?)([ \t]*#[^\n]*)?$`)
)

// fileEdit is a task file's new contents, checked to load.
type fileEdit struct {
	path string
	data []byte
	line string // the memory line as written
}

func (e fileEdit) write() error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(e.path); err == nil {
		mode = st.Mode().Perm()
	}
	return os.WriteFile(e.path, e.data, mode)
}

// memoryEdit sets the [environment] memory of the file a task came from
// to the recommended guarantee, in the form the file already uses
// (memory_mb = 208 or memory = "208M"; a Terminal-Bench 2.0 / Harbor
// task.toml without one gets memory_mb), keeping every other line, and
// checks that the result loads as the same kind of task.
func memoryEdit(path string, c model.Calibration, exp string) (fileEdit, error) {
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
	text := string(data)
	mib := (c.GuaranteeBytes + model.MiB - 1) / model.MiB
	note := fmt.Sprintf("  # headroom calibrate %s: guarantee; recommended hard limit %s, %.2gx the previous %s spec", exp, memString(c.LimitBytes), c.LimitRatio(), memString(c.SpecBytes))
	value := func(key string) string {
		if key == "memory_mb" {
			return fmt.Sprint(mib)
		}
		return strconv.Quote(memString(c.GuaranteeBytes))
	}
	var out, line string
	if h := environmentHeader.FindStringIndex(text); h == nil {
		key := "memory"
		if filepath.Base(path) == "task.toml" {
			key = "memory_mb"
		}
		line = key + " = " + value(key) + note
		out = strings.TrimRight(text, "\n") + "\n\n[environment]\n" + line + "\n"
	} else {
		start, end := h[1], len(text)
		if next := tableHeader.FindStringIndex(text[start:]); next != nil {
			end = start + next[0]
		}
		section := text[start:end]
		if m := memoryKey.FindStringSubmatchIndex(section); m != nil {
			indent, key, eq := section[m[2]:m[3]], section[m[4]:m[5]], section[m[6]:m[7]]
			comment := note
			if m[10] >= 0 && !strings.Contains(section[m[10]:m[11]], "# headroom calibrate") {
				comment = section[m[10]:m[11]] // the user's own comment stays
			}
			line = indent + key + eq + value(key) + comment
			out = text[:start] + section[:m[0]] + line + section[m[1]:] + text[end:]
		} else {
			key := "memory"
			if filepath.Base(path) == "task.toml" {
				key = "memory_mb"
			}
			line = key + " = " + value(key) + note
			out = text[:start] + "\n" + line + text[start:]
		}
	}
	if _, err := taskfile.ParseSource(path, []byte(out)); err != nil {
		return fileEdit{}, fmt.Errorf("the edited file would not load (%v); left unchanged", err)
	}
	return fileEdit{path: path, data: []byte(out), line: strings.TrimSpace(line)}, nil
}

// writeCPUCalibration writes the CPU recommendations, from the throttling
// each tested CPU limit caused; nothing when no trial recorded its CPU.
func writeCPUCalibration(w io.Writer, cals []model.CPUCalibration) {
	if len(cals) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCPUs, from the throttling seen:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tspec\tthrottled by ratio (passed)\tuncapped busiest step\tverdict\tcpus\t")
	for _, c := range cals {
		var thr []string
		for _, t := range c.Throttled {
			thr = append(thr, fmt.Sprintf("%s %s (%d/%d)", t.Ratio, percent(t.CPU.ThrottledShare()), t.Passed, t.Trials))
		}
		need := "-"
		if n := len(c.NeedCores); n > 0 {
			need = fmt.Sprintf("%.2f–%.2f cores", c.NeedCores[0], c.NeedCores[n-1])
		}
		rec := "-"
		if c.Verdict != "unknown" {
			rec = strconv.FormatFloat(c.CPUs, 'f', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Task, strconv.FormatFloat(c.SpecCPUs, 'f', -1, 64), strings.Join(thr, ", "), need, c.Verdict, rec)
	}
	tw.Flush()
	fmt.Fprintln(w, "throttled: share of CFS periods the limit stopped the task in; the recommendation is the smallest limit tried that throttled it in at most 5% of them, else what its uncapped runs used (plus margin); lowered when the spec went unthrottled and the need is under 75% of it. Failures under a limit that did not throttle come from elsewhere: the host's own load (report's quiet vs contended trials) or the task")
}
