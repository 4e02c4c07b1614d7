package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/headroom-eval/headroom/agents"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/replay"
	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/session"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

type runFlags struct {
	tasks       []string
	tasksDir    string
	agents      []string
	ratios      string
	scale       string
	repeats     int
	concurrency int
	seed        string
	out         string
	format      string
	reserve     string
	floor       string
	sampleHz    float64
	sampler     string
	keep        bool
	execSteps   bool
	trace       bool
	applyStore  bool
	failFast    bool
	skipBroken  bool
	allowCaps   []string
	build       buildFlags
	resume      string
	stats       statsFlags
	agent       agentFlags
	knobs       knobFlags
}

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a sweep headless: tasks × agents × ratios × repeats, then print the matrix",
		Example: `  headroom run --ratios 1,3,uncapped --repeats 3
  headroom run --tasks bn-fit-modify --agents heavy --ratios 1x,1.5x,2x --repeats 5 --seed 42`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSweep(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.tasks, "tasks", nil, "tasks to run, by full or short name (default: every task of --tasks-dir when it is given; without it, every built-in task but the real/* install tasks, which need a downloaded image: name them to run them)")
	fl.StringVar(&f.tasksDir, "tasks-dir", "", "also load tasks from this directory: Terminal-Bench 2.0 / Harbor task directories, older terminal-bench task directories, headroom *.toml files")
	fl.StringSliceVar(&f.agents, "agents", nil, "agents to run (default: every agent of each task but nop, which runs when named: task directories have oracle and nop, a check that the verifier fails an untouched environment; --agent-command adds command)")
	fl.StringSliceVar(&f.agents, "agent", nil, "same as --agents")
	f.agent.register(cmd)
	fl.StringVar(&f.ratios, "ratios", "1,1.5,2,3,5,uncapped", "hard-limit ratios: 1, 1x, 2.5x, uncapped")
	fl.StringVar(&f.scale, "scale", "both", "what the ratios limit: memory, cpu or both (the other keeps its guarantee and gets no hard limit, to tell a memory effect from a CPU one)")
	f.knobs.register(cmd)
	fl.IntVar(&f.repeats, "repeats", 3, "trials per task, agent and ratio")
	fl.IntVar(&f.concurrency, "concurrency", 2, "trials running at once (admission control may run fewer)")
	fl.StringVar(&f.seed, "seed", "", "master seed (default: random, recorded in the manifest)")
	fl.StringVar(&f.out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	fl.StringVar(&f.format, "format", "table", "report format: "+strings.Join(report.Formats, ", "))
	f.stats.register(cmd)
	fl.StringVar(&f.resume, "resume", "", "rerun, with the same seeds, the trials an interrupted experiment (id or directory) is missing")
	fl.StringVar(&f.reserve, "reserve", "1G", "host memory kept out of guarantees, for the host itself")
	fl.StringVar(&f.floor, "floor", "512M", "pause new trials while the host has less memory available than this")
	fl.Float64Var(&f.sampleHz, "sample-hz", 20, "memory samples per second per trial (cgroup files)")
	fl.StringVar(&f.sampler, "sampler", "cgroup", "where memory readings come from: cgroup (the files, falling back to stats when unreadable) or stats (the engine's 1 Hz stream, as a remote engine gives)")
	fl.BoolVar(&f.applyStore, "apply-storage", false, "hold each trial's container to its task's storage_mb where the engine can size a container (overlay2 over xfs with pquota, btrfs, zfs, devicemapper; headroom doctor says): stricter than Harbor's Docker environment, which never bounds it; off, what each trial wrote is recorded beside its storage_mb")
	fl.BoolVar(&f.trace, "trace", true, "trace task scripts (bash's xtrace, on a descriptor of headroom's) so that each command is a step with its own peak; --trace=false runs each script untraced as one step, at the harness's speed: a tight loop of shell builtins runs up to ten times slower traced (docs/PARITY.md)")
	fl.BoolVar(&f.execSteps, "exec-steps", false, "run every step with the engine's exec, as task images do (the built-in image otherwise runs its steps through its own step driver, which spares an exec per step)")
	fl.BoolVar(&f.keep, "keep", false, keepUsage)
	fl.StringSliceVar(&f.allowCaps, "allow-capability", nil, allowCapabilityUsage)
	f.build.register(cmd)
	fl.BoolVar(&f.failFast, "fail-fast", false, "refuse the whole sweep, before any trial, if one task cannot run (its image does not build, it lacks the agents); by default that task's trials are recorded as infra-errors saying why, the others run, and the exit code is 3 (when no task can run, there is no sweep to record: it exits 1 saying why)")
	fl.BoolVar(&f.skipBroken, "skip-broken", false, "run the tasks of --tasks-dir that load when some of its task files do not, leaving out too those no agent solves when --agents is not given (by default a sweep over the whole directory is refused: its score would leave those tasks out)")
	return cmd
}

// sweepSetup is everything resolved before a sweep starts.
type sweepSetup struct {
	tasks    []model.Task
	ratios   []model.Ratio
	scale    model.Scale
	axes     []model.Axis
	seed     uint64
	reserve  int64
	floor    int64
	interval time.Duration
	report   report.Options
}

func (f *runFlags) validate() (sweepSetup, error) {
	var s sweepSetup
	var err error
	if s.ratios, err = model.ParseRatios(f.ratios); err != nil {
		return s, usagef("--ratios: %v", err)
	}
	// A name given twice would run its cells twice with one seed, and
	// the matrix would count them as two repeats: refused, as a ratio
	// listed twice is.
	for i, a := range f.agents {
		if slices.Contains(f.agents[:i], a) {
			return s, usagef("--agents: agent %s is listed twice", a)
		}
	}
	if s.scale, err = model.ParseScale(f.scale); err != nil {
		return s, usagef("--scale: %v", err)
	}
	if s.axes, err = f.knobs.axes(); err != nil {
		return s, err
	}
	if err := checkOut(f.out); err != nil {
		return s, err
	}
	if f.repeats < 1 || f.repeats > 10000 {
		return s, usagef("--repeats must be between 1 and 10000 (got %d)", f.repeats)
	}
	if f.concurrency < 1 || f.concurrency > 256 {
		return s, usagef("--concurrency must be between 1 and 256 (got %d)", f.concurrency)
	}
	if !slices.Contains(report.Formats, f.format) {
		return s, usagef("--format must be one of %s (got %q)", strings.Join(report.Formats, ", "), f.format)
	}
	if s.report, err = f.stats.options(); err != nil {
		return s, err
	}
	// NaN is neither <= 0 nor > 1000: --sample-hz nan passed this check.
	if math.IsNaN(f.sampleHz) || f.sampleHz <= 0 || f.sampleHz > 1000 {
		return s, usagef("--sample-hz must be more than 0 and at most 1000 samples a second (got %v)", f.sampleHz)
	}
	s.interval = time.Duration(float64(time.Second) / f.sampleHz)
	if f.sampler != "cgroup" && f.sampler != "stats" {
		return s, usagef("--sampler must be cgroup or stats (got %q)", f.sampler)
	}
	if s.reserve, err = model.ParseBytes(f.reserve); err != nil {
		return s, usagef("--reserve: %v", err)
	}
	if s.floor, err = model.ParseBytes(f.floor); err != nil {
		return s, usagef("--floor: %v", err)
	}
	if f.seed == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		s.seed = binary.LittleEndian.Uint64(b[:]) >> 1
	} else if _, err := fmt.Sscanf(f.seed, "%d", &s.seed); err != nil || fmt.Sprint(s.seed) != f.seed {
		return s, usagef("--seed must be a non-negative integer (got %q)", f.seed)
	}
	return s, nil
}

// loadCatalog loads the built-in tasks and, if given, a tasks directory;
// files that fail are reported and skipped.
// unlessStopped runs load (loadCatalog of the tasks of dir), given up
// when ctx ends (a stop signal): a load reads task files only, so nothing
// is left to undo.
// A suite whose files take long to read (round five's compose file of
// nested merge keys held a run 434 s past its SIGTERM) no longer holds
// the signal until it is read.
func unlessStopped(ctx context.Context, dir string, stderr io.Writer, load func() (*taskfile.Catalog, error)) (*taskfile.Catalog, error) {
	type loaded struct {
		c   *taskfile.Catalog
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		c, err := load()
		done <- loaded{c, err}
	}()
	select {
	case l := <-done:
		return l.c, l.err
	case <-ctx.Done():
		fmt.Fprintf(stderr, "interrupted while loading the tasks of %s: nothing was started\n", dir)
		return nil, exitError{ExitInterrupted}
	}
}

func loadCatalog(dir string, stderr io.Writer) (*taskfile.Catalog, error) {
	c, err := taskfile.Builtin()
	if err != nil {
		return nil, err
	}
	if dir != "" {
		if err := c.AddDir(dir); err != nil {
			return nil, usageError{err}
		}
		for _, p := range c.Problems {
			fmt.Fprintf(stderr, "warning: skipped %v\n", p)
		}
		for _, w := range c.Warnings {
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
	}
	return c, nil
}

// wholeDirectory refuses a sweep over every task of --tasks-dir when some
// of its task files did not load: the warnings scroll by, and the score
// that ends the run would be over fewer tasks than the benchmark has, with
// nothing in it to say so. Named tasks (--tasks) and --skip-broken run.
func (f *runFlags) wholeDirectory(cat *taskfile.Catalog) error {
	if f.tasksDir == "" || len(f.tasks) > 0 || f.skipBroken || len(cat.Problems) == 0 {
		return nil
	}
	n, which := len(cat.Problems), fmt.Sprint(cat.Problems[0])
	if n > 1 {
		which = "the first: " + which + "; all are above"
	}
	return usagef("%s did not load (%s): a sweep over the directory would leave %s out of its score; fix %s (`headroom tasks validate %s` says what is wrong), name the tasks to run with --tasks, or pass --skip-broken to run the rest",
		model.Quantity(n, "task file"), which, pronoun(n), pronoun(n), shellWord(f.tasksDir))
}

// unsolved leaves out, under --skip-broken, the tasks no agent would run
// (no solution/solve.sh, no agent named), saying so: --skip-broken still
// refused the whole sweep for one such task, which validate had passed
// with a note (a new user's). Without it, a sweep over the directory is
// refused naming the flag, as for files that do not load.
func (f *runFlags) unsolved(tasks []model.Task, stderr io.Writer) ([]model.Task, error) {
	if len(f.agents) > 0 || f.tasksDir == "" || len(f.tasks) > 0 {
		return tasks, nil // named agents or tasks: the plan says what is missing
	}
	var kept []model.Task
	var left []string
	for _, t := range tasks {
		if len(t.DefaultAgentNames()) == 0 {
			left = append(left, t.Name)
			continue
		}
		kept = append(kept, t)
	}
	switch {
	case len(left) == 0:
		return tasks, nil
	case !f.skipBroken:
		verb := "have"
		if len(left) == 1 {
			verb = "has"
		}
		return nil, usagef("%s (%s) %s no agent that solves %s (no solution/solve.sh): name an agent with --agents (an installed one from `headroom agents`), or pass --skip-broken to run the rest",
			model.Quantity(len(left), "task"), strings.Join(left, ", "), verb, pronoun(len(left)))
	case len(kept) == 0:
		return nil, usagef("no task of %s has an agent that solves it (no solution/solve.sh): name one with --agents (an installed agent from `headroom agents`)", f.tasksDir)
	}
	for _, n := range left {
		fmt.Fprintf(stderr, "warning: skipped %s: no agent solves it (no solution/solve.sh); --agents NAME runs it\n", n)
	}
	return kept, nil
}

// shortestTimeLimits refuses a --time-limits scale that makes a task's
// agent or verifier time limit shorter than any step takes to start, as
// --timeout-scale refuses one: 0.05x of a 0.1 s limit ran, and the
// timed-out steps' CPU read 42.75 cores on a 2-CPU host (the
// twenty-seventh attacker's 2).
func shortestTimeLimits(tasks []model.Task, axes []model.Axis) error {
	for _, a := range axes {
		for _, k := range a.Values {
			if k.Time.IsBase() || k.Time.Uncapped {
				continue
			}
			for _, t := range tasks {
				if what, s := taskfile.TooShortLimit(t, k.Time.Apply); what != "" {
					return usagef("--time-limits %s makes task %s's %s time limit %v, shorter than any step takes to start: give scales that leave at least %v", k.Time, t.Name, what, s, taskfile.MinTimeout)
				}
			}
		}
	}
	return nil
}

// pronoun is "it" or "them".
func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func runSweep(cmd *cobra.Command, f *runFlags) error {
	stderr := cmd.ErrOrStderr()
	setup, err := f.validate()
	if err != nil {
		return err
	}
	if err := reserveApplies(cmd); err != nil {
		return err
	}
	if f.resume != "" {
		return resumeSweep(cmd, f, setup)
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	conn := connectAsync(ctx, cmd)
	defer conn.discard()
	loaded := runner.TimePhase("", "load tasks")
	cat, err := unlessStopped(ctx, f.tasksDir, stderr, func() (*taskfile.Catalog, error) { return loadCatalog(f.tasksDir, stderr) })
	loaded()
	if err != nil {
		return err
	}
	if setup.tasks, err = cat.Select(f.tasks); err != nil {
		return usageError{err}
	}
	if err := f.wholeDirectory(cat); err != nil {
		return err
	}
	if setup.tasks, err = f.build.apply(setup.tasks); err != nil {
		return err
	}
	lib, err := f.agent.library()
	if err != nil {
		return err
	}
	settings, err := f.agent.settings(installedIn(lib, f.agents))
	if err != nil {
		return err
	}
	var secrets map[string]string
	if setup.tasks, secrets, err = settings.Apply(setup.tasks); err != nil {
		return asAgentsUsage(err)
	}
	if _, problems := agents.TaskSecrets(setup.tasks, secrets, settings.PassEnv); len(problems) > 0 {
		return usageError{problems[0]}
	}
	if setup.tasks, err = f.unsolved(setup.tasks, stderr); err != nil {
		return err
	}
	if err := shortestTimeLimits(setup.tasks, setup.axes); err != nil {
		return err
	}
	noteDeviations(stderr, setup.tasks)
	eng, err := conn.wait()
	if err != nil {
		return err
	}
	defer eng.Close()
	reaped := reapLeftovers(ctx, eng, stderr, f.out)
	spec := session.Spec{
		Tasks: setup.tasks, Agents: f.agents, Ratios: setup.ratios, Scale: setup.scale, Axes: setup.axes, Repeats: f.repeats, Concurrency: f.concurrency, Seed: setup.seed,
		Progress: func(line string) { fmt.Fprintln(stderr, "  "+line) }, Secrets: secrets, AgentSettings: settings.Record(),
	}
	f.running(&spec, setup)
	sw, err := eng.Launch(ctx, spec)
	if err != nil {
		return asUsage(err)
	}
	logReaped(stderr, sw.Dir, reaped)
	fmt.Fprintf(stderr, "experiment %s: %s (%s, ratios %s scaling %s%s, %s, seed %d, concurrency %d)\n  writing to %s\n",
		sw.ID, model.Quantity(len(sw.Plan.Trials), "trial"), model.Quantity(len(setup.tasks), "task"), f.ratios, setup.scale, knobsSummary(setup.axes), model.Quantity(f.repeats, "repeat"), setup.seed, f.concurrency, sw.Dir)
	for _, task := range slices.Sorted(maps.Keys(sw.NotRun)) {
		fmt.Fprintf(stderr, "  cannot run %s (its trials are recorded as infra-errors): %s\n", task, sw.NotRun[task])
	}
	return finishSweep(cmd, sw, f.format, setup.report, keptLister(ctx, eng, f.keep))
}

// finishSweep shows the sweep's progress to the end, then reports every
// trial the experiment holds.
func finishSweep(cmd *cobra.Command, sw *session.Sweep, format string, opts report.Options, kept func(experiment string) []runner.OwnedResource) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	prog := newProgress(stderr, len(sw.Plan.Trials))
	if kept != nil {
		prog.kept = func(trial string) []runner.OwnedResource { return ofTrial(kept(sw.ID), trial) }
		prog.clean = cleanCommand(filepath.Dir(sw.Dir))
	}
	interrupted, why := false, ""
	for ev := range sw.Events() {
		prog.event(ev)
		if end, ok := ev.(event.SweepEnded); ok {
			interrupted, why = end.Interrupted, end.Why
		}
	}
	if err := sw.Err(); err != nil {
		var gone *store.DirGoneError
		if errors.As(err, &gone) {
			// Nothing is re-created where the directory was: no report
			// over an experiment that is not there.
			next := "nothing can resume it"
			switch {
			case gone.MovedTo != "":
				next = fmt.Sprintf("`headroom run --resume %s` runs the rest there", shellWord(gone.MovedTo))
			case gone.Rescued != "":
				next = fmt.Sprintf("`headroom run --resume %s` runs the rest there", shellWord(gone.Rescued))
			}
			return fmt.Errorf("%w; %s", err, next)
		}
		// Every record it reported as finished is written; the rest
		// (shown cancelled) are run by the resume.
		// "Free space" only for a full disk: a trial's directory made a
		// link said so too (the twenty-fifth attacker's 5).
		fix := "fix what it names"
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			fix = "free space there"
		}
		return fmt.Errorf("%w\nno trial was admitted after that; every trial reported finished is recorded; %s, then `%s` runs the rest", err, fix, resumeCommand(sw.ID, filepath.Dir(sw.Dir)))
	}
	fmt.Fprintln(stderr)
	m, trials, records, err := readExperiment(sw.Dir, stderr)
	if err != nil {
		return err
	}
	rep := report.New(sw.ID, &m, m.Ratios, trials, opts).WithTraceSource(uncappedTraces(sw.Dir, trials)).WithRecords(records)
	if err := rep.Write(stdout, format); errors.Is(err, syscall.EPIPE) {
		// Whatever read stdout is gone (Ctrl-C reached `| grep` too): the
		// records are written; say where, and end as the sweep ended.
		fmt.Fprintf(stderr, "the report was not printed: its reader closed stdout; `headroom report %s` prints it\n", shellWord(sw.Dir))
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "\nexperiment %s in %s\n", sw.ID, sw.Dir)
	if interrupted {
		if why != "" {
			fmt.Fprintf(stderr, "stopped: %s\n", why)
		}
		// The command on a line of its own: a terminal wraps a long line
		// where it must, mid-id, and the command then cannot be copied.
		fmt.Fprintf(stderr, "interrupted: unfinished trials were stopped, removed and recorded as cancelled; this reruns them:\n  %s\n", resumeCommand(sw.ID, filepath.Dir(sw.Dir)))
		return exitError{ExitInterrupted}
	}
	if notRun := notRunTasks(trials); len(notRun) > 0 {
		fmt.Fprintf(stderr, "%s could not run; their trials are recorded as infra-errors, left out of the rates:\n", model.Quantity(len(notRun), "task"))
		for _, line := range notRun {
			fmt.Fprintf(stderr, "  %s\n", line)
		}
		fmt.Fprintf(stderr, "fix them, then `%s` runs their trials\n", resumeCommand(sw.ID, filepath.Dir(sw.Dir)))
		return exitError{ExitTasksNotRun}
	}
	return nil
}

// keepUsage is --keep's help, for run and the console. No backquotes:
// pflag would print a backquoted word as the flag's argument name.
const keepUsage = "keep finished trials' containers for inspection (headroom clean removes them)"

// resumable refuses, in words of their own, the experiments no resume
// can continue: an import (its trials ran in another harness) and a
// replay (its tasks are recordings, not task files). They were refused
// all the same, as "tasks: not a task directory" and "task coin__A no
// longer has agent replay" (the twenty-fifth attacker's).
func resumable(m store.Manifest) error {
	if len(m.Imported) > 0 {
		return usagef("resume: %s was imported from %s (%s): its trials ran there, and nothing here can run the rest; import the job again once it has finished", m.ID, m.Imported[0].Harness, m.Imported[0].Dir)
	}
	for _, e := range m.Tasks {
		if slices.Contains(e.Agents, replay.AgentName) {
			return usagef("resume: %s replays recorded sessions (headroom replay), and a replay's experiment cannot be resumed: replay the recordings again (`headroom replay`)", m.ID)
		}
	}
	return nil
}

// resumeCommand is the command that resumes experiment id kept under
// root: --out is named unless root is the default store.
func resumeCommand(id, root string) string {
	cmd := "headroom run --resume " + shellWord(id)
	if filepath.Clean(root) != filepath.Clean(store.DefaultRoot()) {
		cmd += " --out " + shellWord(root)
	}
	return cmd
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+=@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// notRunTasks says, once per task, why the tasks that could not run did
// not (the latest record of each trial counts).
func notRunTasks(trials []model.TrialResult) []string {
	why := map[string]string{}
	var order []string
	for _, r := range trials {
		if !r.TaskNotRun {
			continue
		}
		if _, ok := why[r.Task]; !ok {
			order = append(order, r.Task)
		}
		why[r.Task] = r.Reason
	}
	lines := make([]string, len(order))
	for i, t := range order {
		lines[i] = t + ": " + why[t]
	}
	return lines
}

// resumeSweep reruns what an interrupted experiment is missing.
func resumeSweep(cmd *cobra.Command, f *runFlags, setup sweepSetup) error {
	stderr := cmd.ErrOrStderr()
	// The agent settings too: the resume takes the manifest's, and a
	// --pass-reward or --timeout-scale given was ignored, exit 0 (the
	// twenty-seventh attacker's 4).
	planned := []string{"tasks", "tasks-dir", "agents", "ratios", "scale", "repeats", "seed", "neighbour-load", "neighbour-intensity",
		"pass-reward", "timeout-scale", "agent-command", "agent-version", "agents-dir", "pass-env", "profile"}
	for _, a := range knobAxes {
		planned = append(planned, a.flag)
	}
	for _, name := range planned {
		if cmd.Flags().Changed(name) {
			return usagef("--resume reruns the experiment as it was planned; --%s cannot change it", name)
		}
	}
	dir, err := findExperiment(f.resume, f.out)
	if err != nil {
		return err
	}
	m, err := store.ReadManifest(dir)
	if err != nil {
		return usageError{err}
	}
	if err := resumable(m); err != nil {
		return err
	}
	tasks, secrets, err := agents.ResumeTasks(m)
	if err != nil {
		return asAgentsUsage(err)
	}
	if tasks, err = f.build.apply(tasks); err != nil {
		return err
	}
	spec := resumedSpec(m, tasks, f, setup)
	if err := runAsRecorded(cmd, m.RunAs, &spec); err != nil {
		return err
	}
	spec.Secrets, spec.AgentSettings = secrets, m.AgentSettings
	if cmd.Flags().Changed("concurrency") {
		spec.Concurrency = f.concurrency
	}
	spec.Progress = func(line string) { fmt.Fprintln(stderr, "  "+line) }
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	eng, reaped, err := connectAndReap(ctx, cmd, stderr)
	if err != nil {
		return err
	}
	defer eng.Close()
	sw, res, err := eng.Resume(ctx, dir, spec)
	if err != nil {
		return asUsage(err)
	}
	logReaped(stderr, sw.Dir, reaped)
	fmt.Fprintf(stderr, "resuming experiment %s: rerunning %s, %d of them interrupted without a record (seed %d)\n  writing to %s\n",
		m.ID, model.Quantity(len(res.Rerun), "trial"), len(res.Interrupted), m.Seed, dir)
	for _, task := range slices.Sorted(maps.Keys(sw.NotRun)) {
		fmt.Fprintf(stderr, "  still cannot run: %s: %s\n", task, sw.NotRun[task])
	}
	return finishSweep(cmd, sw, f.format, setup.report, keptLister(ctx, eng, f.keep))
}

// running sets what a run's flags say about how to run, not what: the
// same for a new experiment and a resumed one. (A resume set its own
// copy, which lacked --exec-steps, --sampler and --apply-storage: `run
// --resume ID --exec-steps` ran its trials through the step driver.)
func (f *runFlags) running(spec *session.Spec, setup sweepSetup) {
	spec.OutRoot, spec.ReserveBytes, spec.FloorBytes, spec.SampleEvery = f.out, setup.reserve, setup.floor, setup.interval
	spec.ForceStats, spec.ExecSteps, spec.ApplyStorage, spec.Untraced = f.sampler == "stats", f.execSteps, f.applyStore, !f.trace
	spec.Keep, spec.Version, spec.FailFast, spec.AllowCapabilities = f.keep, Version, f.failFast, allowedCapabilities(f.allowCaps)
}

// runAsRecorded runs a resume's trials as the experiment's ran (its
// manifest's RunAs): a flag of those left out takes the recorded value,
// one given otherwise is refused. The printed resume line named none of
// them, so `run --trace=false` resumed traced, and one cell held both.
func runAsRecorded(cmd *cobra.Command, ran *store.RunAs, spec *session.Spec) error {
	if ran == nil {
		return nil // an older manifest: as the flags say
	}
	onOff := func(flag string) func(bool) string {
		return func(on bool) string { return fmt.Sprintf("--%s=%t", flag, on) }
	}
	for _, fl := range []struct {
		name  string
		field *bool // the spec's setting, which the resume may set
		ran   bool  // the experiment's
		words func(bool) string
	}{
		{"trace", &spec.Untraced, ran.Untraced, func(untraced bool) string { return onOff("trace")(!untraced) }},
		{"exec-steps", &spec.ExecSteps, ran.ExecSteps, onOff("exec-steps")},
		{"apply-storage", &spec.ApplyStorage, ran.ApplyStorage, onOff("apply-storage")},
		{"sampler", &spec.ForceStats, ran.ForceStats, func(stats bool) string {
			if stats {
				return "--sampler stats"
			}
			return "the default sampler"
		}},
	} {
		if *fl.field == fl.ran {
			continue
		}
		if cmd.Flags().Changed(fl.name) {
			return usagef("--resume runs the rest of the experiment as its trials ran, with %s; %s would mix two ways of running in one cell (leave it out)", fl.words(fl.ran), fl.words(*fl.field))
		}
		*fl.field = fl.ran
	}
	return nil
}

// resumedSpec is what a resume runs: the experiment's plan, as its
// manifest recorded it, run as this resume's flags say.
func resumedSpec(m store.Manifest, tasks []model.Task, f *runFlags, setup sweepSetup) session.Spec {
	spec := manifestSpec(m, tasks)
	f.running(&spec, setup)
	return spec
}

// manifestSpec is the plan part of an experiment's spec, as its manifest
// recorded it; the caller adds where and how to run.
func manifestSpec(m store.Manifest, tasks []model.Task) session.Spec {
	return session.Spec{Tasks: tasks, Agents: m.Agents, Ratios: m.Ratios, Scale: m.Scale, Repeats: m.Repeats, Concurrency: max(m.Concurrency, 1), Seed: m.Seed, OnlyRepeat: m.OnlyRepeat}
}

// asUsage marks the session's input errors as usage errors (exit 2).
func asUsage(err error) error {
	var ie session.InputError
	if errors.As(err, &ie) {
		return usageError{ie.Err}
	}
	return asAgentsUsage(err)
}

// progress prints one line per finished trial and one per OOM kill.
type progress struct {
	w     io.Writer
	total int
	done  int
	plan  map[string]model.Trial
	// notRunTold are the tasks that could not run whose reason was given.
	notRunTold map[string]bool
	// activities printed per trial, up to progressActivities.
	activities map[string]int
	// kept lists what --keep left of a trial (nil: not kept), and clean
	// is the command that removes it.
	kept  func(trial string) []runner.OwnedResource
	clean string
	// showing is each trial's running step's command: its own process is
	// what the step is, not news.
	showing map[string]string
	// named is each trial's processes already named (step and command):
	// make -j4's jobs were four identical lines, 99 of a sweep's 255.
	named map[string]map[string]bool
	// saidProcesses: the first process line of the run was explained.
	saidProcesses bool
	// pending is each trial's kill whose line waits for the kernel's word
	// (its figure at the kill, the process it killed): one line a kill,
	// where there were two or three with different figures.
	pending map[string]event.OOMKill
	// now and start time the sweep for each line's elapsed and eta.
	now   func() time.Time
	start time.Time
	// unstarted are the trials cancelled before they started, said in
	// one line (unstartedLine) when another line or the sweep's end
	// comes: an interrupted sweep printed a line, with an eta, for each
	// of its queued trials (the new user of 2026-12-06).
	unstarted []string
	// waitSaid is the kind of the last wait said (its reason's words
	// before its figures): a run held by its floor said nothing at all,
	// and looked hung (the twenty-ninth attacker's 3).
	waitSaid string
}

// progressActivities is how many activity lines a trial prints, and
// progressSteps how many steps its line names; the record has them all.
const (
	progressActivities = 12
	progressSteps      = 12
)

// clipped cuts s to at most n runes, marking the cut.
func clipped(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func newProgress(w io.Writer, total int) *progress {
	return newProgressAt(w, total, time.Now)
}

// newProgressAt is newProgress on a clock of the caller's.
func newProgressAt(w io.Writer, total int, now func() time.Time) *progress {
	return &progress{w: w, total: total, plan: map[string]model.Trial{}, notRunTold: map[string]bool{}, activities: map[string]int{}, showing: map[string]string{},
		named: map[string]map[string]bool{}, pending: map[string]event.OOMKill{}, now: now, start: now()}
}

// killLine says one kill: its step, the usage it was killed at and which
// figure that is (the kernel's, read from its report, else the last
// sample before it), what was killed and whose.
func (p *progress) killLine(ev event.OOMKill) {
	at := model.FormatBytes(ev.OOM.WorkingSetBytes) + " (the last sample before it; the kernel's figure unread)"
	if b, kernel := ev.OOM.KilledAt(); kernel {
		at = model.FormatBytes(b) + " (the kernel's usage at the kill)"
	}
	what := ""
	if ev.OOM.Process != "" || ev.OOM.Command != "" {
		what = ": " + killedWhat(ev.OOM)
	}
	what += killedWhose(ev.OOM)
	fmt.Fprintf(p.w, "  OOM  %s: killed in step %s at %s (limit %s)%s\n", p.label(ev.TrialID()), ev.OOM.Step,
		at, p.plan[ev.TrialID()].Policy.LimitString(), what)
}

// flush says a trial's kill still waiting for the kernel's word, with
// what is known (the trial moved on: its next step, kill or end).
func (p *progress) flush(trial string) {
	if ev, ok := p.pending[trial]; ok {
		delete(p.pending, trial)
		p.killLine(ev)
	}
}

// complete says whether a kill's line has the kernel's figure and what
// it killed: nothing more is to come.
func complete(o model.OOMEvent) bool {
	_, kernel := o.KilledAt()
	return kernel && (o.Process != "" || o.Command != "")
}

// clock is the sweep's elapsed time and, from the pace of the trials
// done so far, the time left: " · 1m2s elapsed, ~1m1s left".
func (p *progress) clock() string {
	el := p.now().Sub(p.start)
	s := " · " + roundDur(el).String() + " elapsed"
	if p.done > 0 && p.done < p.total {
		left := time.Duration(float64(el) / float64(p.done) * float64(p.total-p.done))
		s += ", ~" + roundDur(left).String() + " left"
	}
	return s
}

// roundDur rounds to the second (a tenth under ten seconds).
func roundDur(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// unstartedLine says, once, which trials were cancelled before they
// started.
func (p *progress) unstartedLine() {
	if len(p.unstarted) == 0 {
		return
	}
	ids := p.unstarted[0]
	if n := len(p.unstarted); n > 1 {
		ids += "…" + p.unstarted[n-1]
	}
	fmt.Fprintf(p.w, "[%*d/%d] %-16s %s before they started (%s) · %s elapsed\n", len(fmt.Sprint(p.total)), p.done, p.total,
		model.Cancelled, model.Quantity(len(p.unstarted), "trial"), ids, roundDur(p.now().Sub(p.start)))
	p.unstarted = nil
}

func (p *progress) label(id string) string {
	t := p.plan[id]
	return fmt.Sprintf("%s %s · %s %s r%d", id, t.Task, t.Agent, t.Ratio, t.Repeat)
}

func (p *progress) event(ev event.Event) {
	switch ev := ev.(type) {
	case event.TrialQueued:
		p.plan[ev.Trial.ID] = ev.Trial
	case event.OOMKill:
		if why := ev.OOM.DriverTasks(); why != "" {
			fmt.Fprintf(p.w, "       %s: the kernel then killed headroom's step driver (the container's PID 1), %s: the container ends; the task's own kill at its limit\n", ev.TrialID(), why)
			return
		}
		if ev.OOM.Driver {
			// headroom's own process, not the task's: said as such, once
			// named (the trial's cause says the rest).
			fmt.Fprintf(p.w, "       %s: the kernel then killed headroom's step driver (the container's PID 1) at the limit: the container ends, the trial is not graded\n", ev.TrialID())
			return
		}
		if ev.Detail {
			if _, ok := p.pending[ev.TrialID()]; ok {
				// The kernel's word on the kill waiting: its one line.
				delete(p.pending, ev.TrialID())
				p.killLine(ev)
				return
			}
			at := ""
			if b, kernel := ev.OOM.KilledAt(); kernel {
				at = " at " + model.FormatBytes(b) + " (the kernel's usage at the kill)"
			}
			fmt.Fprintf(p.w, "       %s: the kill above: the kernel killed %s%s%s\n", ev.TrialID(), killedWhat(ev.OOM), at, killedWhose(ev.OOM))
			return
		}
		p.flush(ev.TrialID())
		if complete(ev.OOM) {
			p.killLine(ev)
			return
		}
		p.pending[ev.TrialID()] = ev
	case event.TrialWaiting:
		kind, _, _ := strings.Cut(ev.Reason, " (")
		if strings.HasPrefix(kind, "waiting for a slot") || kind == p.waitSaid {
			return // the concurrency's own queue, or said already
		}
		p.waitSaid = kind
		fmt.Fprintf(p.w, "       %s waits: %s\n", ev.TrialID(), ev.Reason)
	case event.StepStarted:
		p.flush(ev.TrialID())
		p.showing[ev.TrialID()] = ev.Step.Show
	case event.ActivityStarted:
		if ev.Activity.Command == ev.Activity.Step || ev.Activity.Command == p.showing[ev.TrialID()] {
			return // the traced command, or the step's own process: its step says it
		}
		key := ev.Activity.Step + "\x00" + ev.Activity.Command
		if p.named[ev.TrialID()][key] {
			return // another process of the same command: named once
		}
		if p.named[ev.TrialID()] == nil {
			p.named[ev.TrialID()] = map[string]bool{}
		}
		p.named[ev.TrialID()][key] = true
		n := p.activities[ev.TrialID()]
		p.activities[ev.TrialID()] = n + 1
		switch {
		case n < progressActivities:
			if !p.saidProcesses {
				p.saidProcesses = true
				fmt.Fprintf(p.w, "       (TRIAL: STEP: COMMAND is a process a step started that ran past %s, named once a trial and command; the record lists every one)\n", runner.ActivityThreshold)
			}
			fmt.Fprintf(p.w, "       %s: %s: %s\n", ev.TrialID(), clipped(ev.Activity.Step, 200), clipped(ev.Activity.Command, 400))
		case n == progressActivities:
			fmt.Fprintf(p.w, "       %s: more processes: the trial's record lists them\n", ev.TrialID())
		}
	case event.SweepEnded:
		p.unstartedLine()
	case event.TrialEnded:
		p.flush(ev.TrialID())
		delete(p.activities, ev.TrialID())
		delete(p.showing, ev.TrialID())
		delete(p.named, ev.TrialID())
		p.done++
		r := ev.Result
		if r.Outcome == model.Cancelled && r.ContainerID == "" && len(r.Steps) == 0 {
			p.unstarted = append(p.unstarted, r.ID)
			return
		}
		p.unstartedLine()
		var steps []string
		for i, s := range r.Steps {
			if i == progressSteps && len(r.Steps) > progressSteps+1 {
				// A traced script of thousands of commands: one line of
				// progress, not a line of a megabyte; the record has them.
				steps = append(steps, fmt.Sprintf("and %d more step(s)", len(r.Steps)-progressSteps))
				break
			}
			if s.Container != "" {
				// Its memory is its own container's (the record's sidecars).
				steps = append(steps, fmt.Sprintf("%s (in the %s's own container)", s.Name, s.Container))
				continue
			}
			steps = append(steps, fmt.Sprintf("%s %s", s.Name, model.FormatBytes(model.StepPeakBytes(s))))
		}
		fmt.Fprintf(p.w, "[%*d/%d] %-16s %s  peak %s / limit %s  %.1fs  %s%s\n", len(fmt.Sprint(p.total)), p.done, p.total,
			r.OutcomeWord(), p.label(r.ID), model.TrialPeakLabel(r, model.FormatBytes), r.Policy.LimitString(),
			r.End.Sub(r.Start).Seconds(), strings.Join(steps, ", "), p.clock())
		if r.Install != nil {
			fmt.Fprintf(p.w, "      install %.1fs, peak %s, %s\n", time.Duration(r.Install.Duration).Seconds(), model.FormatBytes(r.Install.PeakWorkingSetBytes), model.Quantity(r.Install.Steps, "step"))
		}
		switch {
		case r.TaskNotRun && p.notRunTold[r.Task]:
		case r.TaskNotRun:
			p.notRunTold[r.Task] = true
			fmt.Fprintf(p.w, "      could not run: %s\n", r.Reason)
		case r.Outcome == model.InfraError, r.Stall != nil:
			// A stall's, or a timeout's, time at the limit and faults.
			fmt.Fprintf(p.w, "      %s\n", r.Reason)
		case r.Outcome == model.Failed && r.Reason != "":
			// Why the verdict is a failure ("the verifier wrote no
			// reward", "step fit exited 1"): a new user's failed lines
			// said none, and the legend's "the verifier said no" was not
			// always why.
			fmt.Fprintf(p.w, "      %s\n", runner.Clip(r.Reason, 300))
		case r.Outcome.Success():
			if s, ok := notRunnable(r.Steps); ok {
				// The verifier alone grades, as the harness's does: an
				// agent whose command was not found passed where the
				// verifier said yes, a plain "passed" (a new user's).
				fmt.Fprintf(p.w, "      passed, though the agent's step %s exited %d (%s): the verifier alone grades, as the harness's does\n", clipped(s.Name, 200), s.ExitCode, notRunnableWord(s.ExitCode))
			}
		}
		if p.kept != nil && r.ContainerID != "" {
			if left := p.kept(r.ID); len(left) > 0 {
				fmt.Fprintf(p.w, "      kept for inspection: %s; `%s` removes them\n", keptList(left), cmp.Or(p.clean, "headroom clean"))
			}
		}
	}
}

// notRunnable is the agent's last step where it exited 126 or 127 (the
// shell's "not executable" and "command not found"): the last, since a
// traced script's commands are steps too, and one it guarded (`python
// --version || python3 …`) is no news.
func notRunnable(steps []model.StepResult) (model.StepResult, bool) {
	for i := len(steps) - 1; i >= 0; i-- {
		if s := steps[i]; s.Phase == model.PhaseAgent {
			return s, s.ExitCode == 126 || s.ExitCode == 127
		}
	}
	return model.StepResult{}, false
}

func notRunnableWord(code int) string {
	if code == 126 {
		return "not executable"
	}
	return "command not found"
}

// killedWhat names a killed process: its command line where the process
// watch saw it, the kernel's name for it, pid and rss where its log said.
// killedWhose says whose a killed process was when not the running
// step's own: an earlier step's, or the environment's ("" for the step's).
func killedWhose(o model.OOMEvent) string {
	switch {
	case o.Entrypoint:
		return ", a process " + runner.EntrypointStarted + " (the task's environment, not the step's)"
	case o.StartedInStep != "":
		return ", a process left running by step " + clipped(o.StartedInStep, 200)
	}
	return ""
}

func killedWhat(o model.OOMEvent) string {
	what := o.Command
	if what == "" {
		what = o.Process
	}
	if o.PID != 0 {
		what += fmt.Sprintf(", pid %d, rss %s", o.PID, model.FormatBytes(o.RSSBytes))
	}
	return what
}

// reserveApplies refuses --reserve on a backend whose scheduler places
// the trials: a node's allocatable memory already leaves out what its
// kubelet reserves, and headroom's own reserve would change nothing.
func reserveApplies(cmd *cobra.Command) error {
	if f := cmd.Flags().Lookup("reserve"); f != nil && f.Changed && backendDef(cmd).Places {
		return usagef("--reserve is the Docker host's: on Kubernetes each node's allocatable memory already leaves out what its kubelet reserves (--system-reserved, --kube-reserved); set those on the node, or drop --reserve")
	}
	return nil
}

// keptLister lists what --keep left of an experiment on the platform
// (nil without --keep).
func keptLister(ctx context.Context, eng *session.Engine, keep bool) func(experiment string) []runner.OwnedResource {
	if !keep {
		return nil
	}
	return func(experiment string) []runner.OwnedResource {
		all, err := eng.Owned(ctx)
		if err != nil {
			return nil
		}
		var out []runner.OwnedResource
		for _, o := range all {
			if o.Kept && o.Experiment == experiment {
				out = append(out, o)
			}
		}
		return out
	}
}

// ofTrial is what of owned belongs to one trial.
func ofTrial(owned []runner.OwnedResource, trial string) []runner.OwnedResource {
	var out []runner.OwnedResource
	for _, o := range owned {
		if o.Trial == trial {
			out = append(out, o)
		}
	}
	return out
}

// keptList names kept things as a person finds them again: kind, name
// and short id ("container headroom-E-t0001 (id 3f2a9c1b0d4e)").
func keptList(owned []runner.OwnedResource) string {
	var parts []string
	for _, o := range owned {
		id := o.ID
		if len(id) > 12 && id != o.Name {
			id = id[:12]
		}
		what := o.Kind + " " + o.Name
		if id != "" && id != o.Name {
			// A volume's id is its name: "(id headroom-202)" said nothing
			// (the twenty-third attacker's 8).
			what += " (id " + id + ")"
		}
		parts = append(parts, what)
	}
	return strings.Join(parts, ", ")
}

// allowCapabilityUsage describes --allow-capability.
const allowCapabilityUsage = "trust the tasks with this capability though it reaches past the container (SYS_ADMIN, DAC_READ_SEARCH, SYS_PTRACE, NET_ADMIN...: see docs/TASKS.md); repeatable. Without it a task asking for one is refused before any container starts"

// allowedCapabilities puts --allow-capability's values in the form tasks
// are checked in ("cap_sys_ptrace" → "SYS_PTRACE").
func allowedCapabilities(vals []string) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		out = append(out, model.CapabilityName(v))
	}
	return out
}
