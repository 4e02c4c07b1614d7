package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-eval/headroom/agents"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/runner"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/session"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/headroom-eval/headroom/themes"
	"github.com/headroom-eval/headroom/ui"
	"github.com/mattn/go-isatty"
	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/spf13/cobra"
)

type consoleFlags struct {
	tasksDir    string
	theme       string
	out         string
	ratios      string
	repeats     int
	concurrency int
	seed        uint64
	reserve     string
	keep        bool
	failFast    bool
	allowCaps   []string
	record      string
	replay      []string
	think       string
	agent       agentFlags
	build       buildFlags
}

func (f *consoleFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.agent.register(cmd)
	fl.StringVar(&f.tasksDir, "tasks-dir", "", "also load tasks from this directory: Terminal-Bench 2.0 / Harbor task directories, older terminal-bench task directories, headroom *.toml files")
	fl.StringVar(&f.theme, "theme", "", "dark, light, high-contrast or plain (default: dark, plain under NO_COLOR)")
	fl.StringVar(&f.out, "out", store.DefaultRoot(), "directory that holds experiment directories")
	fl.StringVar(&f.ratios, "ratios", "1,3,uncapped", "hard-limit ratios on at setup (setup default): 1, 1x, 2.5x, uncapped")
	fl.IntVar(&f.repeats, "repeats", 3, "repeats per task, agent and ratio (setup default)")
	fl.IntVar(&f.concurrency, "concurrency", 2, "trials running at once (setup default)")
	// The setup's default seed is one under which the showcase shows what
	// its table says (docs/TASKS.md): the lean agent passes at every ratio
	// and the heavy one at 3x and uncapped but for one chance failure. The
	// trials of a repeat share their seed across ratios, so seed 1 drew
	// lean's 35% failure in all three repeats: 0 of 9, every cell FAILED,
	// which a new user read as the limits' doing.
	fl.Uint64Var(&f.seed, "seed", 3, "master seed of the first sweep (setup default; each later sweep takes the next)")
	fl.StringVar(&f.reserve, "reserve", "1G", "host memory kept out of guarantees, for the host itself")
	fl.BoolVar(&f.keep, "keep", false, keepUsage)
	fl.StringVar(&f.record, "record", "", "also record what the console draws to FILE.cast (asciicast v2), to replay with asciinema play or any asciicast player")
	fl.StringSliceVar(&f.allowCaps, "allow-capability", nil, allowCapabilityUsage)
	f.build.register(cmd)
	fl.StringSliceVar(&f.replay, "replay", nil, "also offer these recorded trials (a Harbor or terminal-bench trial or job directory) as tasks whose agent, replay, repeats the recorded actions (see headroom replay; their tasks from --tasks-dir or the job's config)")
	fl.StringVar(&f.think, "think-time", "recorded", "a --replay's time between actions: recorded, 0, or a factor such as ×2")
	fl.BoolVar(&f.failFast, "fail-fast", false, "refuse a sweep, before any trial, if one task cannot run (its image does not build, it lacks the agents); by default that task's trials are recorded as infra-errors saying why and the others run")
}

// runConsole opens the console; demo, if set, starts that sweep at once.
func runConsole(cmd *cobra.Command, f *consoleFlags, demo func([]model.Task) (*ui.LaunchSpec, error)) error {
	stderr := cmd.ErrOrStderr()
	if f.record != "" && !strings.HasSuffix(f.record, ".cast") {
		return usagef("--record %s: name the recording FILE.cast (asciicast v2, for asciinema play or any asciicast player)", f.record)
	}
	if !isatty.IsTerminal(os.Stdout.Fd()) || !isatty.IsTerminal(os.Stdin.Fd()) {
		return usagef("the console needs a terminal; use `headroom run` for a headless sweep")
	}
	theme, err := themes.ByName(f.theme)
	if err != nil {
		return usageError{err}
	}
	reserve, err := model.ParseBytes(f.reserve)
	if err != nil {
		return usagef("--reserve: %v", err)
	}
	ratios, err := model.ParseRatios(f.ratios)
	if err != nil {
		return usagef("--ratios: %v", err)
	}
	if err := reserveApplies(cmd); err != nil {
		return err
	}
	if err := checkOut(f.out); err != nil {
		return err
	}
	cat, err := loadCatalog(f.tasksDir, stderr)
	if err != nil {
		return err
	}
	var tasks []model.Task
	for _, l := range cat.Tasks {
		tasks = append(tasks, l.Task)
	}
	// The installed agents offered: every one whose keys are set, and the
	// user's own definitions.
	lib, err := f.agent.library()
	if err != nil {
		return err
	}
	settings, err := f.agent.settings(agents.Runnable(lib))
	if err != nil {
		return err
	}
	tasks, secrets, err := settings.Apply(tasks)
	if err != nil {
		return asAgentsUsage(err)
	}
	// A task whose pass-through variable is unset is left out and listed.
	tasks, missing := agents.TaskSecrets(tasks, secrets, settings.PassEnv)
	var problems []string
	for _, p := range append(cat.Problems, missing...) {
		problems = append(problems, p.Error())
	}
	replays, err := consoleReplays(f, stderr)
	if err != nil {
		return err
	}
	for _, r := range replays.refused {
		problems = append(problems, r.Error())
	}
	tasks = append(tasks, replays.tasks...)
	if tasks, err = f.build.apply(tasks); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), consoleStopSignals()...)
	defer stop()

	l := &consolePort{ctx: ctx, out: f.out, reserve: reserve, keep: f.keep, failFast: f.failFast, allowCaps: allowedCapabilities(f.allowCaps), secrets: secrets, settings: settings.Record(), annotate: replays.annotate, build: f.build}
	opts := ui.Options{Tasks: tasks, Port: l, Theme: theme, Repeats: f.repeats, Concurrency: f.concurrency, Seed: f.seed,
		Problems: problems, Warnings: cat.Warnings, Backend: backendName(cmd), Ratios: ratios}
	if f.tasksDir != "" {
		opts.Validate = "headroom tasks validate " + shellWord(f.tasksDir)
	}
	for _, t := range replays.tasks {
		opts.Preselect = append(opts.Preselect, t.Name)
	}
	if f.tasksDir == "" && len(replays.tasks) == 0 {
		// On the built-in catalog, setup opens with the showcase chosen
		// (a heavy pip install and a lean agent): enter runs it.
		opts.Preselect = []string{demoTask}
	}
	if d, ok := runner.Lookup(backendName(cmd)); ok {
		l.backend = d
		l.byName = map[string]model.Task{}
		for _, t := range tasks {
			l.byName[t.Name] = t
		}
	}
	if eng, reaped, err := connectAndReap(ctx, cmd, stderr); err != nil {
		l.connectErr, opts.EngineError = err, err
		fmt.Fprintf(stderr, "warning: %v\n", err)
	} else {
		defer eng.Close()
		l.eng, l.reaped = eng, reaped
		opts.HostCPUs = eng.Host.CPUs
		// Build the workload image now, in plain sight, rather than
		// silently on the first start.
		if taskfile.UsesBuiltinImage(tasks) {
			if _, err := eng.WorkloadImage(ctx, false, func(line string) { fmt.Fprintln(stderr, "  "+line) }); err != nil {
				return err
			}
		}
		// Task directories' images too (built once, cached by their
		// context's digest); a task whose image fails is listed on the
		// setup screen with why, and left out of the list: it cannot
		// run (it was offered, and enter said only "could not start").
		var runnable []model.Task
		for _, t := range opts.Tasks {
			if t.Format != model.FormatHeadroom && t.Format != "" {
				if err := eng.TaskImages(ctx, []model.Task{t}, func(line string) { fmt.Fprintln(stderr, "  "+line) }); err != nil {
					problems = append(problems, err.Error())
					continue
				}
			}
			runnable = append(runnable, t)
		}
		opts.Tasks = runnable
		opts.Problems = problems
		l.imageNote = realImageNote(ctx, eng)
	}
	if demo != nil {
		spec, err := demo(tasks)
		if err != nil {
			return err
		}
		opts.Demo = spec
	}
	progOpts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx)}
	var rec *castRecorder
	if f.record != "" {
		if rec, err = newCastRecorder(f.record, os.Stdout, "headroom "+cmd.Name(), time.Now); err != nil {
			return err
		}
		progOpts = append(progOpts, tea.WithOutput(rec))
	}
	p := tea.NewProgram(ui.New(opts), progOpts...)
	final, runErr := p.Run()
	// The console's screen goes with it, and what was printed before it
	// (make's build log) is what the terminal showed after q: its last
	// lines are the sweep's matrix instead.
	if fm, ok := final.(ui.Model); ok {
		if sum := fm.ExitSummary(); sum != "" {
			fmt.Fprintln(stderr, sum)
		}
	}
	if rec != nil {
		if err := rec.Finish(); err != nil {
			fmt.Fprintf(stderr, "warning: the recording %s is incomplete: %v\n", f.record, err)
		} else {
			fmt.Fprintf(stderr, "recorded %s (asciicast v2): `asciinema play %s` replays it\n", f.record, shellWord(f.record))
		}
	}
	// Whatever ended the console, nothing may be left running.
	left, storeErrs := l.shutdown()
	if left > 0 {
		fmt.Fprintf(stderr, "stopped %s and removed their containers\n", model.Quantity(left, "running trial"))
	}
	// --keep: what was left, by name and id, to be found again.
	if l.keep && l.eng != nil {
		listCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		kept := keptLister(listCtx, l.eng, true)
		seen := map[string]bool{}
		for _, sw := range l.started() {
			if seen[sw.ID] {
				continue
			}
			seen[sw.ID] = true
			if left := kept(sw.ID); len(left) > 0 {
				fmt.Fprintf(stderr, "experiment %s: kept for inspection: %s; `%s` removes them\n", sw.ID, keptList(left), cleanCommand(filepath.Dir(sw.Dir)))
			}
		}
		cancel()
	}
	// A sweep the quit (or SIGTERM) cut short is said as headless says
	// it: which experiment, and the command that finishes it.
	// A finished one says where it is and what shows it, so `q` after
	// the demo does not end the talk without a word.
	interrupted := l.interrupted()
	var demoEnded *session.Sweep
	if demo != nil && ctx.Err() == nil {
		interrupted, demoEnded = demoEnd(l.started(), interrupted)
	}
	writeExitNotes(stderr, l.started(), interrupted, demoEnded)
	// A sweep whose records could not be kept (its directory removed or
	// moved, the disk full) stopped; the console's cards said "not
	// recorded": said here too, where it outlives the screen.
	for _, err := range storeErrs {
		fmt.Fprintf(stderr, "headroom: %v\n", err)
	}
	if len(storeErrs) > 0 {
		return exitError{1}
	}
	if err := consoleRunError(runErr); err != nil {
		return err
	}
	if ctx.Err() != nil || len(interrupted) > 0 {
		return exitError{ExitInterrupted}
	}
	return nil
}

// consoleRunError is what the console's program ended with, as the exit
// says it: a panic it recovered (its stack printed above) is a crash and
// exits non-zero, whatever else it wraps (bubbletea wraps it in
// ErrProgramKilled, which alone is a stop by the context: a signal,
// said by the interrupt's code).
func consoleRunError(err error) error {
	switch {
	case errors.Is(err, tea.ErrProgramPanic):
		return fmt.Errorf("the console crashed (%w); its trials were stopped and their containers removed: the stack above says where, please report it", err)
	case err != nil && !errors.Is(err, tea.ErrProgramKilled):
		return err
	}
	return nil
}

// realImageNote says, for a real task whose Debian image is not on the
// platform yet, what choosing it prepares first (the setup screen marks
// the row and adds it to the estimate); the images are looked up once.
func realImageNote(ctx context.Context, eng *session.Engine) func(model.Task) string {
	missing := map[string]string{}
	for _, image := range []string{model.BuiltinDebian, model.BuiltinDebianCache} {
		if ref, ok := eng.Platform.ImageReady(ctx, model.Task{Name: image, Image: image}); !ok {
			missing[image] = ref
		}
	}
	return func(t model.Task) string {
		ref, ok := missing[t.Image]
		if !ok {
			return ""
		}
		what := "debootstrap of Debian (~40 MB download, about 2 min)"
		if t.Image == model.BuiltinDebianCache {
			what = "debootstrap of Debian and apt's package cache (~170 MB download, several minutes)"
		}
		return "builds " + ref + " first: " + what + ", once"
	}
}

// consolePort is the console's Port: it starts the console's sweeps on
// the engine (and makes sure none outlives the console), and answers the
// rest from the engine, the store and the host.
type consolePort struct {
	ctx        context.Context
	eng        *session.Engine
	connectErr error
	out        string
	reserve    int64
	keep       bool
	failFast   bool
	allowCaps  []string
	secrets    map[string]string
	settings   *store.AgentSettings
	annotate   func(*model.TrialResult) // a replay's comparison with its recording
	build      buildFlags               // --build-network, --build-memory, --build-cpus
	preparing  atomic.Value             // string: the latest image preparation line
	// backend is the backend's definition (its policy flags and
	// reproduce line), byName the catalog's tasks it is given.
	backend runner.BackendDef
	byName  map[string]model.Task
	// imageNote says what choosing a task builds first (nil: nothing).
	imageNote func(model.Task) string
	specs     fileSpecs

	mu     sync.Mutex
	active []*session.Sweep
	all    []*session.Sweep // every sweep started, shutdown's included
	// reaped is what the console's start removed, logged in the first
	// experiment it makes or resumes.
	reaped []runner.OwnedResource
}

// spec fills what every console sweep shares into s.
func (l *consolePort) spec(s session.Spec) session.Spec {
	s.OutRoot, s.ReserveBytes, s.FloorBytes, s.Keep, s.FailFast = l.out, l.reserve, 512*model.MiB, l.keep, l.failFast
	s.AllowCapabilities, s.Annotate = l.allowCaps, l.annotate
	s.SampleEvery, s.Version = 50*time.Millisecond, Version
	l.preparing.Store("")
	s.Progress = func(line string) { l.preparing.Store(line) }
	return s
}

// Preparing is the latest line of image preparation, for the console.
func (l *consolePort) Preparing() string {
	s, _ := l.preparing.Load().(string)
	return s
}

// track remembers a started sweep so that none outlives the console.
func (l *consolePort) track(sw *session.Sweep, err error) (ui.Sweep, error) {
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.active = append(l.active, sw)
	l.all = append(l.all, sw)
	reaped := l.reaped
	l.reaped = nil
	l.mu.Unlock()
	logReaped(io.Discard, sw.Dir, reaped)
	return consoleSweep{sw}, nil
}

func (l *consolePort) Launch(spec ui.LaunchSpec) (ui.Sweep, error) {
	if l.eng == nil {
		return nil, l.connectErr
	}
	return l.track(l.eng.Launch(l.ctx, l.sessionSpec(spec)))
}

// sessionSpec is what the engine runs for the console's spec: the same
// fields run's flags set (the scale included), with the launcher's own.
func (l *consolePort) sessionSpec(spec ui.LaunchSpec) session.Spec {
	return l.spec(session.Spec{
		Tasks: spec.Tasks, Agents: spec.Agents, Ratios: spec.Ratios, Scale: spec.Scale, Axes: spec.Axes, Repeats: spec.Repeats, Concurrency: spec.Concurrency,
		Seed: spec.Seed, OnlyRepeat: spec.OnlyRepeat, Secrets: l.secrets, AgentSettings: l.settings,
	})
}

// Resume reruns what an interrupted experiment is missing (history's r).
func (l *consolePort) Resume(exp ui.Experiment) (ui.Sweep, error) {
	if l.eng == nil {
		return nil, l.connectErr
	}
	m, err := store.ReadManifest(exp.Dir)
	if err != nil {
		return nil, err
	}
	tasks, secrets, err := agents.ResumeTasks(m)
	if err != nil {
		return nil, err
	}
	if tasks, err = l.build.apply(tasks); err != nil {
		return nil, err
	}
	spec := manifestSpec(m, tasks)
	spec.Secrets, spec.AgentSettings = secrets, m.AgentSettings
	sw, _, err := l.eng.Resume(l.ctx, exp.Dir, l.spec(spec))
	return l.track(sw, err)
}

// shutdown cancels sweeps still running and waits for their trials to be
// stopped, removed and recorded. It returns how many trials it stopped.
func (l *consolePort) shutdown() (int, []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	stopped := 0
	var errs []error
	for _, sw := range l.active {
		sw.Cancel()
		deadline := time.After(2 * time.Minute)
	drain:
		for {
			select {
			case e, ok := <-sw.Events():
				if !ok {
					break drain
				}
				if te, ok := e.(event.TrialEnded); ok && te.Result.Outcome == model.Cancelled && te.Result.ContainerID != "" {
					stopped++
				}
			case <-deadline:
				break drain
			}
		}
		if err := sw.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	l.active = nil
	return stopped, errs
}

// started is every sweep the console started, in order.
func (l *consolePort) started() []*session.Sweep {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all)
}

// interrupted is the console's sweeps whose experiment ended
// interrupted and was not finished since (a resume in the same console
// that completed it is not), each once, in the order they started.
func (l *consolePort) interrupted() []*session.Sweep {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*session.Sweep
	seen := map[string]bool{}
	for i := len(l.all) - 1; i >= 0; i-- {
		sw := l.all[i]
		if seen[sw.Dir] {
			continue
		}
		seen[sw.Dir] = true
		if m, err := store.ReadManifest(sw.Dir); err == nil && m.Status == "interrupted" {
			out = append(out, sw)
		}
	}
	slices.Reverse(out)
	return out
}

// demoEnd takes the demo's own sweep (the console's first) out of the
// interrupted ones: the demo repeats until the presenter quits, so its
// end is no interruption (it printed "interrupted", a command to resume
// and exit 130 after every talk). A signal still interrupts it, and a
// sweep started from its setup screen is a sweep like any other.
func demoEnd(started, interrupted []*session.Sweep) (rest []*session.Sweep, demo *session.Sweep) {
	if len(started) == 0 {
		return interrupted, nil
	}
	i := slices.Index(interrupted, started[0])
	if i < 0 {
		return interrupted, nil
	}
	return slices.Delete(slices.Clone(interrupted), i, i+1), started[0]
}

// writeExitNotes says, once per experiment the console started, where
// it is and what comes next: an interrupted one the command that reruns
// its unfinished trials, a finished one (or the demo, ended by its
// presenter) the command that reports it.
func writeExitNotes(w io.Writer, started, interrupted []*session.Sweep, demo *session.Sweep) {
	cut := map[string]bool{}
	for _, sw := range interrupted {
		cut[sw.Dir] = true
	}
	seen := map[string]bool{}
	for _, sw := range started {
		if seen[sw.Dir] {
			continue
		}
		seen[sw.Dir] = true
		if demo != nil && sw.Dir == demo.Dir {
			fmt.Fprintf(w, "experiment %s in %s\nthe demo ended: `%s` shows what it ran\n", sw.ID, sw.Dir, reportCommand(sw.ID, filepath.Dir(sw.Dir)))
			continue
		}
		if cut[sw.Dir] {
			fmt.Fprintf(w, "experiment %s in %s\ninterrupted: unfinished trials were stopped, removed and recorded as cancelled; this reruns them:\n  %s\n", sw.ID, sw.Dir, resumeCommand(sw.ID, filepath.Dir(sw.Dir)))
			continue
		}
		if m, err := store.ReadManifest(sw.Dir); err == nil && m.Status == "finished" {
			fmt.Fprintf(w, "experiment %s in %s\nfinished: `%s` shows its outcomes\n", sw.ID, sw.Dir, reportCommand(sw.ID, filepath.Dir(sw.Dir)))
		}
	}
}

// reportCommand is the report of experiment id kept under root.
func reportCommand(id, root string) string {
	cmd := "headroom report " + shellWord(id)
	if filepath.Clean(root) != filepath.Clean(store.DefaultRoot()) {
		cmd += " --out " + shellWord(root)
	}
	return cmd
}

// cleanCommand removes what --keep left of experiments kept under root:
// with its --out, only theirs (without it, `clean` takes every headroom
// leftover on the platform a dead run left, other users' too: a new
// user's hint dropped the --out that `report`'s kept).
func cleanCommand(root string) string {
	if filepath.Clean(root) != filepath.Clean(store.DefaultRoot()) {
		return "headroom clean --out " + shellWord(root)
	}
	return "headroom clean"
}

type consoleSweep struct{ s *session.Sweep }

func (c consoleSweep) ID() string                 { return c.s.ID }
func (c consoleSweep) Dir() string                { return c.s.Dir }
func (c consoleSweep) Plan() model.Plan           { return c.s.Plan }
func (c consoleSweep) Events() <-chan event.Event { return c.s.Events() }
func (c consoleSweep) StopTrial(id string) bool   { return c.s.StopTrial(id) }
func (c consoleSweep) Cancel()                    { c.s.Cancel() }
func (c consoleSweep) Hold(why string)            { c.s.Hold(why) }

// HostStat is the host's load, read now.
func (l *consolePort) HostStat() (ui.HostStat, bool) { return hostStat(), true }

// History lists the store's experiments.
func (l *consolePort) History() ([]ui.Experiment, error) { return history(l.out)() }

// Respec reads a task's resources from its own file, when it changed.
func (l *consolePort) Respec(t model.Task) (model.Resources, bool) { return l.specs.read(t) }

// ImageNote says what choosing t builds first, or "".
func (l *consolePort) ImageNote(t model.Task) string {
	if l.imageNote == nil {
		return ""
	}
	return l.imageNote(t)
}

// PolicyArgs are the backend's own settings for a policy.
func (l *consolePort) PolicyArgs(p model.ResourcePolicy) []string {
	if l.backend.PolicyArgs == nil {
		return nil
	}
	return l.backend.PolicyArgs(p)
}

// Reproduce is the backend's command that runs a task's image under a
// policy outside headroom; a task not in the catalog (a resumed or
// imported one) gives the policy's flags alone.
func (l *consolePort) Reproduce(task, image string, p model.ResourcePolicy) string {
	if l.backend.Reproduce == nil {
		return ""
	}
	return l.backend.Reproduce(l.byName[task], image, p)
}

func hostStat() ui.HostStat {
	var h ui.HostStat
	if vm, err := mem.VirtualMemory(); err == nil {
		h.MemTotal, h.MemAvailable = int64(vm.Total), int64(vm.Available)
	}
	if p, err := cpu.Percent(0, false); err == nil && len(p) > 0 {
		h.CPUPercent = p[0]
	}
	return h
}

func history(root string) func() ([]ui.Experiment, error) {
	return func() ([]ui.Experiment, error) {
		list, err := store.List(root)
		if err != nil {
			return nil, err
		}
		var out []ui.Experiment
		for _, s := range list {
			s := s
			var tasks []string
			images, typos := map[string]string{}, map[string]string{}
			for _, t := range s.Manifest.Tasks {
				tasks = append(tasks, t.Name)
				images[t.Name] = t.Image
				if n := model.TypoNote(t.Deviations, t.Resources); n != "" {
					typos[t.Name] = n
				}
			}
			out = append(out, ui.Experiment{
				ID: s.Manifest.ID, Dir: s.Dir, Status: s.Manifest.Status, Trials: s.Manifest.Trials,
				Created: s.Manifest.Created.Local().Format("2006-01-02 15:04"),
				Tasks:   tasks, Images: images, Typos: typos, Ratios: s.Manifest.Ratios, Repeats: s.Manifest.Repeats, Concurrency: s.Manifest.Concurrency,
				Trace: func(id string) ([]event.Sample, []string, error) { return store.ReadTrace(s.Dir, id) },
			})
			// Load reads the summary; Record one trial's record, where
			// the last Load found it.
			var mu sync.Mutex
			var record func(string) (model.TrialResult, error)
			out[len(out)-1].Load = func() (model.Plan, []model.TrialResult, error) {
				plan, results, rec, err := store.BrowseRecords(s.Dir, s.Manifest)
				mu.Lock()
				record = rec
				mu.Unlock()
				return plan, results, err
			}
			out[len(out)-1].Record = func(id string) (model.TrialResult, error) {
				mu.Lock()
				rec := record
				mu.Unlock()
				if rec == nil {
					if _, _, rec, _ = store.BrowseRecords(s.Dir, s.Manifest); rec == nil {
						return model.TrialResult{}, fmt.Errorf("experiment %s cannot be read", s.Manifest.ID)
					}
				}
				return rec(id)
			}
		}
		return out, nil
	}
}

// fileSpecs reads tasks' resources from their own files, each again only
// when its file has changed since it was last read (calibrate --write
// while the console is open). The zero value is ready.
type fileSpecs struct {
	mu    sync.Mutex
	cache map[string]seenSpec
}

type seenSpec struct {
	mod time.Time
	res model.Resources
	ok  bool
}

// read is t's resources as its file says them now: false for built-in
// tasks, or a file that no longer loads.
func (fs *fileSpecs) read(t model.Task) (model.Resources, bool) {
	if t.Source == "" || strings.HasPrefix(t.Source, "builtin:") {
		return model.Resources{}, false
	}
	st, err := os.Stat(t.Source)
	if err != nil {
		return model.Resources{}, false
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.cache == nil {
		fs.cache = map[string]seenSpec{}
	}
	// The profile is the task's as loaded, so it is part of the key: the
	// same file read for a hardened and a harbor task gives two answers.
	key := t.Source + "\x00" + string(t.Profile)
	if c, ok := fs.cache[key]; ok && c.mod.Equal(st.ModTime()) {
		return c.res, c.ok
	}
	c := seenSpec{mod: st.ModTime()}
	if data, err := taskfile.ReadSource(t.Source); err == nil {
		if l, err := taskfile.ParseSource(t.Source, data); err == nil {
			// The file says memory and CPU; the pids limit is the
			// profile's too (none under harbor, 1024 hardened,
			// the file's own where it sets one), as the task was
			// loaded: a task directory's file read bare would
			// otherwise bring headroom's hardened 1024 into a
			// harbor trial once the console re-reads it.
			l.Task.SetProfile(cmp.Or(t.Profile, model.ProfileHardened))
			c.res, c.ok = l.Task.Resources, true
		}
	}
	fs.cache[key] = c
	return c.res, c.ok
}

// Shell opens a shell in a running trial's sandbox (docker exec -it,
// kubectl exec -it).
func (l *consolePort) Shell(id string, task model.Task) (*exec.Cmd, error) {
	if l.eng == nil {
		return nil, fmt.Errorf("no engine: %w", ui.ErrUnavailable)
	}
	if task.Image == taskfile.BuiltinImage {
		return nil, fmt.Errorf("the built-in workload image is FROM scratch and has no shell")
	}
	argv, err := l.eng.Platform.Shell(id)
	if err != nil {
		return nil, err
	}
	return exec.Command(argv[0], argv[1:]...), nil
}
