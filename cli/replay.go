package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/replay"
	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/session"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

type replayFlags struct {
	run   runFlags
	think string
	list  bool
}

func newReplayCmd() *cobra.Command {
	f := &replayFlags{}
	cmd := &cobra.Command{
		Use:   "replay JOB_DIR[/TRIAL]...",
		Short: "Replay recorded agent sessions (Harbor trajectories, terminal-bench casts) under every ratio: the same actions, only the machine changes",
		Long: `replay takes Harbor trials (agent/trajectory.json, ATIF: terminus' keystrokes or
another agent's shell commands) or terminal-bench trials (sessions/agent.cast,
commands.txt) and runs each recorded session again in its task's own container,
action by action with the recorded think time, under each ratio; then the task's
own verifier. Each trial says where it parted from its recording; the report
says which recorded passes are killed here at 1x (machine failures by
construction), and which fail uncapped too (they do not replay).
A directory may be one trial or a whole job (run); trials that cannot be
replayed are named with why.`,
		Example: `  headroom replay jobs/2026-11-30__12-00-00/bn-fit-modify__Ab3dE --ratios 1,2,3,uncapped
  headroom replay runs/2025-08-07__20-46-16 --tasks-dir ~/terminal-bench/tasks --think-time 0
  headroom replay jobs/2026-11-30__12-00-00 --list`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReplay(cmd, f, args) },
	}
	fl := cmd.Flags()
	r := &f.run
	fl.StringVar(&r.tasksDir, "tasks-dir", "", "where the recorded tasks' directories are (default: the job's config.task.path)")
	fl.StringVar(&f.think, "think-time", "recorded", "time between actions: recorded (the model's latency as recorded), 0, or a factor such as ×2 or x0.5")
	fl.BoolVar(&f.list, "list", false, "only say which trials replay (their actions, task and think time) and which cannot, and why")
	fl.StringVar(&r.ratios, "ratios", "1,2,3,uncapped", "hard-limit ratios: 1, 1x, 2.5x, uncapped")
	fl.StringVar(&r.scale, "scale", "both", "what the ratios limit: memory, cpu or both")
	r.knobs.register(cmd)
	fl.IntVar(&r.repeats, "repeats", 1, "replays per trial and ratio (the actions are the same; the machine's timing is not)")
	fl.IntVar(&r.concurrency, "concurrency", 1, "replays running at once (admission control may run fewer)")
	fl.StringVar(&r.seed, "seed", "", "master seed (default: random, recorded in the manifest)")
	fl.StringVar(&r.out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	fl.StringVar(&r.format, "format", "table", "report format: "+strings.Join(report.Formats, ", "))
	r.stats.register(cmd)
	fl.StringVar(&r.reserve, "reserve", "1G", "host memory kept out of guarantees, for the host itself")
	fl.StringVar(&r.floor, "floor", "512M", "pause new trials while the host has less memory available than this")
	fl.Float64Var(&r.sampleHz, "sample-hz", 20, "memory samples per second per trial (cgroup files)")
	fl.StringVar(&r.sampler, "sampler", "cgroup", "where memory readings come from: cgroup or stats")
	fl.BoolVar(&r.keep, "keep", false, keepUsage)
	fl.StringSliceVar(&r.allowCaps, "allow-capability", nil, allowCapabilityUsage)
	return cmd
}

// replaySet is what a replay runs: the tasks made to replay each
// recording, and each recording by its task's name.
type replaySet struct {
	tasks      []model.Task
	recordings map[string]replay.Recording
	refused    []replay.Refusal
}

func runReplay(cmd *cobra.Command, f *replayFlags, args []string) error {
	stderr := cmd.ErrOrStderr()
	setup, err := f.run.validate()
	if err != nil {
		return err
	}
	think, err := replay.ParseThinkTime(f.think)
	if err != nil {
		return usagef("--think-time: %v", err)
	}
	cat, err := recordedTasks(f.run.tasksDir, stderr)
	if err != nil {
		return err
	}
	bin := ""
	if !f.list {
		if bin, err = session.WorkloadBinary(true, func(line string) { fmt.Fprintln(stderr, "  "+line) }); err != nil {
			return fmt.Errorf("the replayer (headroom's in-container program): %w", err)
		}
	}
	set, err := loadReplays(args, cat, replay.Options{Binary: bin, Think: think})
	if err != nil {
		return err
	}
	for _, r := range set.refused {
		fmt.Fprintf(stderr, "%v\n", r)
	}
	if f.list {
		listReplays(cmd.OutOrStdout(), set)
		return nil
	}
	if len(set.tasks) == 0 {
		return usagef("nothing to replay: every trial given was refused (above)")
	}
	setup.tasks = set.tasks
	noteDeviations(stderr, setup.tasks)
	for _, t := range set.tasks {
		if capped := set.recordings[t.Name].ThinkCapped; capped != "" {
			fmt.Fprintf(stderr, "  %s: %s\n", t.Name, capped)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	conn := connectAsync(ctx, cmd)
	defer conn.discard()
	eng, err := conn.wait()
	if err != nil {
		return err
	}
	defer eng.Close()
	reaped := reapLeftovers(ctx, eng, stderr, f.run.out)
	sw, err := eng.Launch(ctx, session.Spec{
		Tasks: setup.tasks, Agents: []string{replay.AgentName}, Ratios: setup.ratios, Scale: setup.scale, Axes: setup.axes, Repeats: f.run.repeats, Concurrency: f.run.concurrency, Seed: setup.seed,
		OutRoot: f.run.out, ReserveBytes: setup.reserve, FloorBytes: setup.floor, SampleEvery: setup.interval, ForceStats: f.run.sampler == "stats", Keep: f.run.keep, Version: Version,
		Progress: func(line string) { fmt.Fprintln(stderr, "  "+line) }, AllowCapabilities: allowedCapabilities(f.run.allowCaps),
		Annotate: set.annotate,
	})
	if err != nil {
		return asUsage(err)
	}
	logReaped(stderr, sw.Dir, reaped)
	fmt.Fprintf(stderr, "experiment %s: replaying %s under ratios %s (%s, think time %s)\n  writing to %s\n",
		sw.ID, model.Quantity(len(set.tasks), "recorded trial"), f.run.ratios, model.Quantity(len(sw.Plan.Trials), "trial"), think, sw.Dir)
	for task, why := range sw.NotRun {
		fmt.Fprintf(stderr, "  cannot replay %s (its trials are recorded as infra-errors): %s\n", task, why)
	}
	return finishSweep(cmd, sw, f.run.format, setup.report, keptLister(ctx, eng, f.run.keep))
}

// annotate adds to a replayed trial's record how it went against its
// recording.
func (s replaySet) annotate(res *model.TrialResult) {
	if rec, ok := s.recordings[res.Task]; ok {
		res.Replay = replay.Diverge(rec, *res)
	}
}

// recordedTasks is the catalog a recording's task is looked up in: the
// --tasks-dir's tasks alone (a built-in task of the same name is not the
// recorded one); nil without a directory.
func recordedTasks(dir string, stderr io.Writer) (*taskfile.Catalog, error) {
	if dir == "" {
		return nil, nil
	}
	c := &taskfile.Catalog{}
	if err := c.AddDir(dir); err != nil {
		return nil, usageError{err}
	}
	for _, p := range c.Problems {
		fmt.Fprintf(stderr, "warning: skipped %v\n", p)
	}
	return c, nil
}

// consoleReplays are the console's --replay recordings as tasks.
func consoleReplays(f *consoleFlags, stderr io.Writer) (replaySet, error) {
	if len(f.replay) == 0 {
		return replaySet{}, nil
	}
	think, err := replay.ParseThinkTime(f.think)
	if err != nil {
		return replaySet{}, usagef("--think-time: %v", err)
	}
	cat, err := recordedTasks(f.tasksDir, stderr)
	if err != nil {
		return replaySet{}, err
	}
	bin, err := session.WorkloadBinary(true, nil)
	if err != nil {
		return replaySet{}, fmt.Errorf("the replayer (headroom's in-container program): %w", err)
	}
	return loadReplays(f.replay, cat, replay.Options{Binary: bin, Think: think})
}

// loadReplays reads every directory given and makes each recording that
// can be replayed a task of its own; the rest are refused with why.
func loadReplays(dirs []string, cat *taskfile.Catalog, o replay.Options) (replaySet, error) {
	set := replaySet{recordings: map[string]replay.Recording{}}
	for _, dir := range dirs {
		found, err := replay.Load(dir)
		if err != nil {
			return set, usageError{err}
		}
		set.refused = append(set.refused, found.Refused...)
		for _, rec := range found.Recordings {
			task, err := recordedTask(rec, cat)
			switch {
			case err != nil:
				set.refused = append(set.refused, replay.Refusal{Dir: rec.Dir, Why: err.Error()})
				continue
			case len(task.Phases) > 0:
				set.refused = append(set.refused, replay.Refusal{Dir: rec.Dir, Why: fmt.Sprintf("%s is a multi-step task: a recording does not say which phase each action belongs to", task.Name)})
				continue
			}
			if _, dup := set.recordings[rec.Trial]; dup {
				set.refused = append(set.refused, replay.Refusal{Dir: rec.Dir, Why: fmt.Sprintf("a trial named %s is already replayed (from another job): replay the jobs one at a time", rec.Trial)})
				continue
			}
			rec = replay.CapThink(rec, task, o.Think)
			set.recordings[rec.Trial] = rec
			set.tasks = append(set.tasks, replay.Task(rec, task, o))
		}
	}
	return set, nil
}

// recordedTask loads the task a recording ran: from --tasks-dir by name,
// else from the directory the job's config names.
func recordedTask(rec replay.Recording, cat *taskfile.Catalog) (model.Task, error) {
	if cat != nil {
		t, err := cat.Find(rec.Task)
		if err == nil || rec.TaskPath == "" {
			return t, err
		}
	}
	if rec.TaskPath == "" {
		return model.Task{}, fmt.Errorf("the recording does not name its task's directory: give the directory holding %s with --tasks-dir", rec.Task)
	}
	_, l, err := taskfile.FindRecordedTaskDir(rec.Job, rec.TaskPath, rec.Task)
	switch {
	case err == nil:
		return l.Task, nil
	case errors.Is(err, taskfile.ErrNoRecordedTaskDir):
		return model.Task{}, errors.New("its task's directory (config.task.path " + rec.TaskPath + ") is not on this machine: give the directory holding " + rec.Task + " with --tasks-dir")
	}
	return model.Task{}, fmt.Errorf("its task (config.task.path %s): %w", rec.TaskPath, err)
}

// listReplays says what would replay, one line a trial.
func listReplays(w io.Writer, set replaySet) {
	for _, t := range set.tasks {
		rec := set.recordings[t.Name]
		kind := "shell commands"
		if rec.Terminal {
			kind = "keystrokes"
		}
		verdict := rec.Outcome
		if verdict == "" {
			verdict = "no verdict"
		}
		fmt.Fprintf(w, "%s: %s, %s (%s), task %s, recorded %s", rec.Trial, model.Quantity(len(rec.Actions), "action"), kind, rec.Agent, rec.Task, verdict)
		if len(rec.Notes) > 0 {
			fmt.Fprintf(w, "; %s", strings.Join(rec.Notes, "; "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d replay, %d cannot\n", len(set.tasks), len(set.refused))
}
