package ui

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
	"github.com/headroom-eval/headroom/themes"
)

// Screen is one of the console's top-level views.
type Screen int

// Screens, in tab order (the number keys 1–5 pick them).
const (
	SetupScreen Screen = iota
	LiveScreen
	MatrixScreen
	FocusScreen
	HistoryScreen
	DetailScreen // drilled into from live, matrix, focus or history
)

var screenNames = []string{"Setup", "Live", "Matrix", "Focus", "History"}

// Options configure the console.
type Options struct {
	Tasks []model.Task
	// Port is what the console asks of the world it runs in (nil: a
	// console with nothing behind it, which starts nothing).
	Port     Port
	Theme    themes.Theme
	HostCPUs int
	// Now is the clock (fixed in tests). Static turns off spinners and
	// timers so a view depends only on the events fed to it.
	Now    func() time.Time
	Static bool
	// Demo starts this sweep at once and opens the live screen.
	Demo *LaunchSpec
	// Ratios are the ratios setup opens with on (nil: 1x, 3x and
	// uncapped); one not among the standard ones is added, as a custom
	// ratio typed on setup is.
	Ratios []model.Ratio
	// Preselect names the tasks whose rows (every agent) setup opens
	// with selected: the showcase on the built-in catalog, so that enter
	// runs something at once.
	Preselect []string
	// Defaults for the setup screen.
	Repeats, Concurrency int
	Seed                 uint64
	// FollowEvery overrides how often an experiment opened while it runs
	// elsewhere is read again (tests; 0: followEvery).
	FollowEvery time.Duration
	// EngineError is why the engine could not be reached at start (nil:
	// it was); setup says so, whole, before anything is chosen.
	EngineError error
	// Problems are task files that could not be loaded and tasks left
	// out (a secret unset, an image that did not build); setup lists
	// them. Warnings are about tasks that loaded and can run (a Harbor
	// task without instruction.md): listed as warnings, not as skipped.
	Problems, Warnings []string
	// Validate is the command that lists every task file's problems and
	// warnings, for those setup leaves out ("": `headroom tasks
	// validate --tasks-dir DIR`).
	Validate string
	// Backend is the platform's backend ("docker", "kubernetes"): the
	// legend names what is done to a trial from outside in its words.
	Backend string
}

// Model is the console's root: it owns layout, focus and the sweep.
type Model struct {
	opts   Options
	keys   KeyMap
	help   help.Model
	theme  themes.Theme
	width  int
	height int
	screen Screen
	back   Screen // where esc from detail goes

	// The screens: each a Component (common.go) with its own keys, size
	// and view; component maps a Screen to its own.
	setup   setupScreen
	live    liveScreen
	matrix  matrixScreen
	detail  detailScreen
	focus   focusScreen
	history historyScreen
	// loaded is the experiment opened read-only from history.
	loaded *Experiment

	sweep Sweep
	state *SweepState
	spec  LaunchSpec
	frame int
	// watching is set while a sweep's events are awaited: their batches
	// then drive the clock, and clockHeld says the tick stopped for it.
	watching, clockHeld bool
	host                HostStat
	showHelp            bool
	confirm             *confirmation
	quitting            bool
	// message is the status line's notice, said at messageAt; it goes
	// after messageTTL, or when what it announces is over (stopping names
	// the trial being stopped, cancelling the sweep being cancelled).
	message    string
	messageAt  time.Time
	sticky     bool // the message stays past messageTTL
	stopping   string
	cancelling bool
	// launching is set while a sweep is being started.
	launching bool
}

// confirmation is a y/n question; yes is handled as a message on y.
type confirmation struct {
	prompt string
	yes    tea.Msg
	// quit asks to quit: its prompt counts the running trials as it is
	// drawn, since trials go on ending while it waits (none start: the
	// queue is held until it is answered).
	quit bool
}

// text is the question as drawn now. Quitting with trials still queued
// says what becomes of them: "queue held" alone, with 0 running and 29
// queued, read as if nothing were left (the new user of 2026-12-06).
func (c *confirmation) text(running, queued int) string {
	if c.quit {
		if queued > 0 {
			return fmt.Sprintf("Quit? %d running stop (containers removed), %d queued never start; resumable. y/n", running, queued)
		}
		return fmt.Sprintf("Quit? %d running trial(s) will be stopped, containers removed. y/n", running)
	}
	return c.prompt
}

// keepAnswer clips a question to w columns keeping its closing " y/n":
// cut at the edge, the answer it waits for was cut off first ("Cancel the
// sweep? … all are recor…" at 80 columns, a new user's try).
func keepAnswer(q string, w int) string {
	const answer = " y/n"
	if width(q) <= w || !strings.HasSuffix(q, answer) || w <= len(answer)+1 {
		return clip(q, w)
	}
	return clip(strings.TrimSuffix(q, answer), w-len(answer)) + answer
}

// quitConfirmedMsg is quit's yes: stop everything, then exit.
type quitConfirmedMsg struct{}

// messageTTL is how long a notice stays on the status line.
const messageTTL = 8 * time.Second

// say puts a notice on the status line ("" clears it).
func (m *Model) say(text string) {
	m.message, m.messageAt = text, m.now()
	m.stopping, m.cancelling, m.sticky = "", false, false
}

// notice is the status line's current notice.
func (m *Model) notice() string {
	if m.message == "" || m.stopping != "" || m.cancelling || m.launching || m.quitting || m.sticky {
		return m.message
	}
	if m.now().Sub(m.messageAt) > messageTTL {
		return ""
	}
	return m.message
}

// Messages.
type (
	eventsMsg struct {
		events []event.Event
		closed bool
	}
	tickMsg  time.Time
	hostMsg  HostStat
	shellMsg struct {
		err   error
		trial string
	}
	launchedMsg struct {
		sweep Sweep
		spec  LaunchSpec
		err   error
		// prior is a resumed experiment as it stood (its whole plan and
		// its results): the console shows the whole experiment, not only
		// the trials the resume reruns.
		prior *loadedMsg
	}
	historyMsg struct {
		list []Experiment
		err  error
	}
	loadedMsg struct {
		exp     Experiment
		plan    model.Plan
		results []model.TrialResult
		err     error
		// follow: a re-read of the experiment already open, which is
		// running elsewhere (the screen and cursor stay).
		follow bool
	}
)

// New builds the console.
func New(opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// Paths and messages of task files that did not load: text from the
	// file system, made printable like any task's.
	opts.Problems, opts.Warnings = printable.Value(opts.Problems), printable.Value(opts.Warnings)
	if opts.Repeats == 0 {
		opts.Repeats = 3
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 2
	}
	m := Model{opts: opts, keys: DefaultKeys(), help: help.New(), theme: opts.Theme, launching: opts.Demo != nil}
	if m.theme.Name == "" {
		m.theme = themes.Dark()
	}
	m.applyTheme()
	k := m.keys
	m.setup, m.live, m.matrix = newSetup(opts, k.Setup), newLive(k.Live), newMatrix(k)
	m.detail, m.focus, m.history = newDetail(k.Detail), newFocus(k.Focus), newHistory(k.History)
	return m
}

// component is the screen's Component.
func (m *Model) component(s Screen) Component {
	switch s {
	case SetupScreen:
		return &m.setup
	case LiveScreen:
		return &m.live
	case MatrixScreen:
		return &m.matrix
	case FocusScreen:
		return &m.focus
	case HistoryScreen:
		return &m.history
	case DetailScreen:
		return &m.detail
	}
	return nil
}

// toScreens hands msg to every screen (what concerns a screen whichever
// is shown); what they ask of the root in answer comes back as messages.
func (m *Model) toScreens(msg tea.Msg) tea.Cmd {
	c := m.common()
	var cmds []tea.Cmd
	for s := SetupScreen; s <= DetailScreen; s++ {
		cmds = append(cmds, m.component(s).Update(c, msg))
	}
	return tea.Batch(append(cmds, c.requests()...)...)
}

// ExitSummary is the matrix's table of the sweep shown, as wide as the
// console was, with no cursor: what the console prints on the terminal as it closes, so that
// the terminal's last lines are the outcomes, not the build log the
// console's screen had covered ("" when no sweep was shown).
func (m Model) ExitSummary() string {
	if m.state == nil || m.state.Done == 0 {
		return ""
	}
	w := cmp.Or(m.width, 100)
	c := m.common()
	mm := m.matrix
	mm.row, mm.list = -1, false
	lines := mm.table(c, w, math.MaxInt32) // every row
	out := []string{clip("── the matrix as the console closed: "+m.state.doneText()+" ──", w)}
	// Plain text: it outlives the console on a terminal of any kind, and
	// the error stream it goes to escapes control bytes.
	for _, l := range lines {
		out = append(out, strings.TrimRight(ansi.Strip(l), " "))
	}
	return strings.Join(out, "\n")
}

// common is what the screens share, for one call.
func (m *Model) common() *Common {
	return &Common{Theme: m.theme, Opts: &m.opts, State: m.state, Spec: m.spec, Host: m.host, Now: m.now(),
		Frame: m.frame, Running: m.Running(), Loaded: m.loaded}
}

// listHistory asks the store for the past experiments.
func (m *Model) listHistory() tea.Cmd { return listHistory(m.opts.port().History) }

func (m *Model) applyTheme() {
	st := m.theme.Styles
	m.help.Styles.ShortKey, m.help.Styles.FullKey = st.HelpKey, st.HelpKey
	m.help.Styles.ShortDesc, m.help.Styles.FullDesc = st.HelpDesc, st.HelpDesc
	m.help.Styles.ShortSeparator, m.help.Styles.FullSeparator = st.Muted, st.Muted
}

// Init starts the clock, the host probe and, in demo mode, the sweep.
func (m Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if !m.opts.Static {
		cmds = append(cmds, tick())
	}
	cmds = append(cmds, probeHost(m.opts.port(), 0))
	if m.opts.Demo != nil {
		cmds = append(cmds, m.launch(*m.opts.Demo))
	}
	return tea.Batch(cmds...)
}

// beat is how often the clock moves the spinner and the elapsed times:
// twice a second shows life; every render costs about a millisecond of
// CPU with eight cards.
const beat = 500 * time.Millisecond

// tick drives the clock while no sweep is watched; while one is, its
// event batches do (waitEvents), so that a clock tick never adds a render
// to the five a second the events already cause.
func tick() tea.Cmd {
	return tea.Tick(beat, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func probeHost(p Port, after time.Duration) tea.Cmd {
	ask := func() tea.Msg {
		if h, ok := p.HostStat(); ok {
			return hostMsg(h)
		}
		return nil
	}
	if after <= 0 {
		return ask
	}
	return tea.Tick(after, func(time.Time) tea.Msg { return ask() })
}

// batchWindow bounds how often events make the console redraw: samples
// of 8 trials at 20 Hz would otherwise cost 160 renders a second; five
// a second keeps gauges live, and an OOM kill skips the wait.
const batchWindow = 200 * time.Millisecond

// waitEvents hands the console the next batch of events: it waits for
// one, then gathers what arrives within batchWindow, so a burst of pip
// output costs one render, not hundreds. An OOM kill is handed over at
// once: it must be on screen without delay. With no event for a beat it
// hands over an empty batch: the clock, while the sweep is quiet.
func waitEvents(ch <-chan event.Event) tea.Cmd {
	return func() tea.Msg {
		idle := time.NewTimer(beat)
		var e event.Event
		var ok bool
		select {
		case e, ok = <-ch:
			idle.Stop()
		case <-idle.C:
			return eventsMsg{}
		}
		if !ok {
			return eventsMsg{closed: true}
		}
		batch := []event.Event{e}
		if urgent(e) {
			return eventsMsg{events: batch}
		}
		window := time.NewTimer(batchWindow)
		defer window.Stop()
		for len(batch) < 4096 {
			select {
			case e, ok := <-ch:
				if !ok {
					return eventsMsg{events: batch, closed: true}
				}
				batch = append(batch, e)
				if urgent(e) {
					return eventsMsg{events: batch}
				}
			case <-window.C:
				return eventsMsg{events: batch}
			}
		}
		return eventsMsg{events: batch}
	}
}

func urgent(e event.Event) bool {
	switch e.(type) {
	case event.OOMKill, event.SweepEnded:
		return true
	}
	return false
}

// launch starts a sweep in the background; the caller marks the model
// launching (m.launching = true) so that image preparation is shown.
func (m *Model) launch(spec LaunchSpec) tea.Cmd {
	l := m.opts.port()
	return func() tea.Msg {
		sw, err := l.Launch(spec)
		return launchedMsg{sweep: sw, spec: spec, err: err}
	}
}

func (m *Model) now() time.Time { return m.opts.Now() }

// Running says whether a sweep is in flight.
func (m *Model) Running() bool { return m.sweep != nil && m.state != nil && !m.state.Finished }

// State is the current sweep's state (nil before the first sweep).
func (m Model) State() *SweepState { return m.state }

// CurrentScreen is the screen shown.
func (m Model) CurrentScreen() Screen { return m.screen }

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		w, h := m.bodySize()
		for s := SetupScreen; s <= DetailScreen; s++ {
			m.component(s).SetSize(w, h)
		}
		return m, nil
	case tickMsg:
		m.frame++
		if m.launching {
			if p := m.opts.port().Preparing(); p != "" {
				m.say("preparing images: " + p)
			}
		}
		if m.watching {
			m.clockHeld = true // the sweep's event batches keep the clock
			return m, nil
		}
		return m, tick()
	case hostMsg:
		m.host = HostStat(msg)
		return m, probeHost(m.opts.port(), 2*time.Second)
	case launchedMsg:
		m.launching = false
		if msg.err != nil {
			m.say("could not start: " + msg.err.Error())
			return m, nil
		}
		m.sweep, m.spec = msg.sweep, msg.spec
		m.state = NewSweepState(msg.sweep.Plan(), m.now())
		if p := msg.prior; p != nil && p.err == nil {
			m.state = ResumedState(p.plan, p.results, msg.sweep.Plan(), m.now())
		}
		m.say("")
		m.loaded = nil
		m.live, m.matrix = newLive(m.keys.Live), newMatrix(m.keys)
		m.live.SetSize(m.bodySize())
		m.matrix.SetSize(m.bodySize())
		if msg.spec.Label == "focus" {
			m.screen = FocusScreen
		} else {
			m.screen = LiveScreen
		}
		m.watching = true
		return m, waitEvents(msg.sweep.Events())
	case eventsMsg:
		m.frame++
		var changed tea.Cmd
		if m.state != nil {
			for _, e := range msg.events {
				m.state.Apply(e)
				switch e := e.(type) {
				case event.TrialEnded:
					if e.Result.Outcome == model.InfraError {
						// Say it where it is seen: the engine may be gone.
						m.say(e.Result.ID + " infra error: " + e.Result.Reason)
					} else if e.Result.ID == m.stopping {
						m.say(e.Result.ID + " stopped: recorded as " + string(e.Result.Outcome))
					}
				case event.SweepEnded:
					switch {
					case e.NotKept != "":
						// The records could not be kept: said until
						// something else is, not for a notice's while.
						m.say("sweep stopped, its records not kept: " + e.NotKept + " (said again on quit)")
						m.sticky = true
					case e.Why != "":
						// headroom stopped it: the platform went away.
						m.say("sweep stopped: " + e.Why + "; resume it from history (5, r)")
					case m.cancelling:
						m.say("sweep cancelled: what finished is on the matrix (3)")
					}
				}
			}
			changed = m.toScreens(stateChangedMsg{})
		}
		if msg.closed {
			m.watching = false
			if m.quitting {
				return m, tea.Batch(changed, tea.Quit)
			}
			if m.clockHeld {
				m.clockHeld = false
				return m, tea.Batch(changed, tick())
			}
			return m, changed
		}
		return m, tea.Batch(changed, waitEvents(m.sweep.Events()))
	case shellMsg:
		// A trial that finished while its shell was opening (or open)
		// took the container with it: docker exec's bare "exit status 1"
		// said nothing of that.
		if v := m.trialView(msg.trial); v != nil && v.Phase == Finished {
			m.say(msg.trial + " has finished: its container is gone, and the shell with it")
		} else if msg.err != nil {
			m.say("shell: " + msg.err.Error())
		} else {
			m.say("back from the shell")
		}
		return m, nil
	case historyMsg:
		return m, m.toScreens(msg)
	case loadedMsg:
		told := m.toScreens(msg)
		if msg.err != nil {
			m.say(fmt.Sprintf("open %s: %v", msg.exp.ID, msg.err))
			return m, told
		}
		exp := msg.exp
		if msg.follow {
			if m.loaded == nil || m.loaded.ID != exp.ID || m.sweep != nil {
				return m, told // another experiment or sweep since: stop
			}
			m.state = FromResults(msg.plan, msg.results).withImages(exp.Images)
			return m, tea.Batch(told, m.toScreens(stateChangedMsg{}), m.follow(exp, msg.plan, msg.results))
		}
		m.loaded = &exp
		m.state = FromResults(msg.plan, msg.results).withImages(exp.Images)
		m.sweep, m.spec = nil, LaunchSpec{}
		m.matrix = newMatrix(m.keys)
		m.matrix.SetSize(m.bodySize())
		m.screen = MatrixScreen
		m.say("opened " + exp.ID + " (read-only)")
		return m, tea.Batch(told, m.follow(exp, msg.plan, msg.results))
	case tea.KeyMsg:
		return m.updateKey(msg)
	default:
		return m.request(msg)
	}
}

// request handles what a screen asked for (common.go's messages).
func (m Model) request(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case noticeMsg:
		m.say(string(msg))
	case confirmMsg:
		m.confirm = &confirmation{prompt: msg.prompt, yes: msg.yes}
	case openShellMsg:
		// Its trial may have ended while the question was asked:
		// openShell says so, on the status line.
		if v := m.trialView(msg.id); v != nil {
			c := m.common()
			return m, tea.Batch(append([]tea.Cmd{openShell(c, v)}, c.requests()...)...)
		}
	case stopTrialMsg:
		if v := m.trialView(msg.id); v != nil && v.Phase == Finished {
			// Its end came while the question was asked (or its card
			// lingers after it): "stopping" would wait for an end that
			// has come, and stayed on the status line for good.
			m.say(msg.id + " had already ended")
			break
		}
		if m.sweep != nil {
			m.sweep.StopTrial(msg.id)
		}
		m.say("stopping " + msg.id)
		m.stopping = msg.id
	case cancelSweepMsg:
		if m.Running() {
			m.sweep.Cancel()
			m.say("cancelling the sweep…")
			m.cancelling = true
		}
	case quitConfirmedMsg:
		m.quitting = true
		if !m.watching {
			// The sweep ended while the prompt was open: its stream
			// has closed, and no later close will come to quit on.
			return m, tea.Quit
		}
		m.say("cancelling: stopping trials and removing containers…")
		m.sweep.Cancel()
	case openTrialMsg:
		return m, m.openDetail(msg.v)
	case closeTrialMsg:
		m.screen = m.back
		return m, m.toScreens(msg)
	case launchMsg:
		m.launching = true
		respecced := m.respec()
		spec := msg.spec
		spec.Tasks = append([]model.Task(nil), spec.Tasks...)
		for i := range spec.Tasks {
			spec.Tasks[i].Resources = m.opts.specOf(spec.Tasks[i])
		}
		return m, tea.Batch(respecced, m.launch(spec))
	case focusMsg:
		if !msg.confirmed {
			if m.Running() {
				m.say("a sweep is running: focus when it ends")
				return m, nil
			}
			yes := msg
			yes.confirmed = true
			m.confirm = &confirmation{prompt: fmt.Sprintf("Focus: run %s · %s at %s %d times, scale %s (%s)? y/n",
				path.Base(msg.task.Name), msg.agent, msg.ratio, m.setup.focusRuns, cmp.Or(msg.scale, model.ScaleBoth), scaleWords(cmp.Or(msg.scale, model.ScaleBoth))), yes: yes}
			return m, nil
		}
		return m.startFocus(msg.task, msg.agent, msg.ratio, msg.scale)
	case rerunMsg:
		return m.rerun(msg.v)
	case resumeMsg:
		return m.resume(msg.exp)
	case openExperimentMsg:
		if m.Running() {
			m.say("a sweep is running: open history when it ends")
			return m, m.toScreens(msg)
		}
		exp := msg.exp
		return m, func() tea.Msg {
			plan, results, err := exp.Load()
			return loadedMsg{exp: exp, plan: plan, results: results, err: err}
		}
	}
	return m, nil
}

// followEvery is how often an experiment opened from history while it
// runs elsewhere is read again.
const followEvery = 2 * time.Second

// follow re-reads an opened experiment that is still running (its status
// says so and trials of its plan have no result yet), so the console
// follows it live rather than showing the moment it was opened.
func (m *Model) follow(exp Experiment, plan model.Plan, results []model.TrialResult) tea.Cmd {
	if exp.Status != "running" || exp.Load == nil || len(results) >= len(plan.Trials) {
		return nil
	}
	every := followEvery
	if m.opts.FollowEvery > 0 {
		every = m.opts.FollowEvery
	}
	return tea.Tick(every, func(time.Time) tea.Msg {
		plan, results, err := exp.Load()
		return loadedMsg{exp: exp, plan: plan, results: results, err: err, follow: true}
	})
}

// respec brings every task's resources up to its file (Port.Respec):
// setup's rows and the tasks focus and rerun start from.
func (m *Model) respec() tea.Cmd {
	for i := range m.opts.Tasks {
		m.opts.Tasks[i].Resources = m.opts.specOf(m.opts.Tasks[i])
	}
	return m.toScreens(respecMsg{})
}

// specOf is a task's resources as its file says them now.
// task is the loaded task of that name, if the console loaded one.
func (o *Options) task(name string) (model.Task, bool) {
	if o != nil {
		for _, t := range o.Tasks {
			if t.Name == name {
				return t, true
			}
		}
	}
	return model.Task{}, false
}

// loaded says whether the console loaded a task of that name.
func (o *Options) loaded(name string) bool {
	_, ok := o.task(name)
	return ok
}

func (o *Options) specOf(t model.Task) model.Resources {
	if r, ok := o.port().Respec(t); ok {
		return r
	}
	return t.Resources
}

// resume reruns what an interrupted experiment is missing.
func (m Model) resume(exp Experiment) (tea.Model, tea.Cmd) {
	if m.Running() {
		m.say("a sweep is running: resume when it ends")
		return m, nil
	}
	r := m.opts.port()
	return m, func() tea.Msg {
		// What it holds before the resume adds to it.
		var prior *loadedMsg
		if exp.Load != nil {
			plan, results, err := exp.Load()
			prior = &loadedMsg{exp: exp, plan: plan, results: results, err: err}
		}
		sw, err := r.Resume(exp)
		// Its ratios and concurrency as the run had them: with neither,
		// a resumed showcase lost its one cell a ratio (a new user's).
		spec := LaunchSpec{Label: "resume " + exp.ID, Ratios: exp.Ratios, Repeats: exp.Repeats, Concurrency: exp.Concurrency}
		return launchedMsg{sweep: sw, spec: spec, err: err, prior: prior}
	}
}

func (m Model) updateKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys.Global
	if m.confirm != nil {
		c := m.confirm
		m.confirm = nil
		if c.quit {
			// The queue was held while the prompt was open; a yes
			// cancels everything anyway.
			m.hold("")
		}
		switch msg.String() {
		case "y", "Y":
			return m.Update(c.yes)
		default:
			m.say("")
		}
		return m, nil
	}
	if m.quitting {
		return m, nil
	}
	// Text entry owns the keyboard while it is open.
	if m.typing() {
		return m.updateScreen(msg)
	}
	// Keys typed faster than the console reads arrive as one message of
	// several runes ("kkk"), which no binding matches: one key each.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		var cmds []tea.Cmd
		var next tea.Model = m
		for _, r := range msg.Runes {
			var cmd tea.Cmd
			next, cmd = next.(Model).updateKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			cmds = append(cmds, cmd)
		}
		return next, tea.Batch(cmds...)
	}
	tabs := m.screen != SetupScreen && m.screen != DetailScreen
	switch {
	case msg.String() == "ctrl+c" || key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
		return m, nil
	case m.showHelp && msg.String() == "esc":
		m.showHelp = false
		return m, nil
	case key.Matches(msg, k.Theme):
		if themes.NoColor() {
			// Every theme is plain under NO_COLOR: cycling names that
			// change nothing misled (newcomer trial).
			m.say("themes are off: NO_COLOR is set (unset it for colour)")
			return m, nil
		}
		m.theme = themes.Next(m.theme)
		m.applyTheme()
		m.say("theme " + m.theme.Name)
		return m, nil
	case key.Matches(msg, k.Screen1):
		m.screen = SetupScreen
		return m, m.respec()
	case key.Matches(msg, k.Screen2):
		m.screen = LiveScreen
		return m, nil
	case key.Matches(msg, k.Screen3):
		m.screen = MatrixScreen
		return m, nil
	case key.Matches(msg, k.Screen4):
		m.screen = FocusScreen
		return m, nil
	case key.Matches(msg, k.Screen5):
		m.screen = HistoryScreen
		return m, m.listHistory()
	case tabs && key.Matches(msg, k.Prev):
		m.screen = (m.screen + 4) % 5
		return m, m.enterScreen()
	case tabs && key.Matches(msg, k.Next):
		m.screen = (m.screen + 1) % 5
		return m, m.enterScreen()
	}
	return m.updateScreen(msg)
}

// trialView is the sweep's view of a trial, or nil.
func (m *Model) trialView(id string) *TrialView {
	if m.state == nil || id == "" {
		return nil
	}
	return m.state.Trials[id]
}

func (m *Model) enterScreen() tea.Cmd {
	if m.screen == HistoryScreen {
		return m.listHistory()
	}
	return nil
}

func (m *Model) typing() bool {
	t, ok := m.component(m.screen).(typer)
	return ok && t.typing()
}

// updateScreen hands a key to the screen shown, then handles what the
// screen asked for, in order.
func (m Model) updateScreen(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	c := m.common()
	cmds := []tea.Cmd{m.component(m.screen).Update(c, msg)}
	var next tea.Model = m
	for _, req := range c.outbox {
		var cmd tea.Cmd
		next, cmd = next.Update(req)
		cmds = append(cmds, cmd)
	}
	return next, tea.Batch(cmds...)
}

func (m Model) quit() (tea.Model, tea.Cmd) {
	if !m.Running() {
		return m, tea.Quit
	}
	m.confirm = &confirmation{quit: true, yes: quitConfirmedMsg{}}
	// No new trial starts while the user decides: the prompt's count of
	// running trials stays what a yes would stop.
	m.hold("the quit prompt is open")
	return m, nil
}

// Holder is a Sweep that can keep its queued trials from starting
// (session.Sweep.Hold); why "" lets them go.
type Holder interface {
	Hold(why string)
}

// hold holds or lets go the running sweep's queue, where it can.
func (m Model) hold(why string) {
	if h, ok := m.sweep.(Holder); ok && m.sweep != nil {
		h.Hold(why)
	}
}

// openDetail drills into one trial: the detail screen opens it.
func (m *Model) openDetail(v *TrialView) tea.Cmd {
	if v == nil {
		return nil
	}
	if m.screen != DetailScreen {
		m.back = m.screen
	}
	m.screen = DetailScreen
	if v.Result != nil && !v.whole && m.loaded != nil && m.loaded.Record != nil {
		// A stored trial opened from its summary: its detail is its
		// record's (steps' counters, processes, phases, kills' trees).
		r, err := m.loaded.Record(v.Trial.ID)
		if err != nil {
			m.say("trial " + v.Trial.ID + ": " + err.Error())
		} else {
			v.whole = true
			v.Result = &r
			if len(r.Steps) > 0 {
				v.Steps = r.Steps
			}
			if len(r.Activities) > 0 {
				v.Activities = r.Activities
			}
			if len(r.OOMs) > 0 {
				v.OOMs = r.OOMs
			}
		}
	}
	if len(v.Samples) == 0 && len(v.Log) == 0 && m.loaded != nil && m.loaded.Trace != nil {
		// A stored trial: read its samples and log from the experiment.
		samples, log, err := m.loaded.Trace(v.Trial.ID)
		if err != nil {
			m.say("trial " + v.Trial.ID + ": " + err.Error())
		}
		v.Samples, v.Log = samples, printable.Value(log)
	}
	return m.toScreens(openTrialMsg{v})
}

// bodySize is the space between the header and the footer.
func (m *Model) bodySize() (int, int) {
	return m.width, max(m.height-3, 1)
}

// View draws the whole screen.
func (m Model) View() string {
	if m.width == 0 {
		return "starting…"
	}
	w, h := m.bodySize()
	var body string
	if m.showHelp {
		body = m.viewHelp(w, h)
	} else {
		body = m.component(m.screen).View(m.common())
	}
	// Styled: whatever a screen drew, only its colours and lines reach
	// the terminal (every task's text is made printable before it is
	// kept; this catches a field missed on the way).
	return printable.Styled(strings.Join([]string{m.viewHeader(), fit(body, w, h), m.viewStatus(), m.viewFooter()}, "\n"))
}

func (m Model) viewHeader() string {
	st := m.theme.Styles
	parts := []string{st.Title.Render("headroom")}
	for i, n := range screenNames {
		label := fmt.Sprintf("%d %s", i+1, n)

		if Screen(i) == m.screen || (m.screen == DetailScreen && Screen(i) == m.back) {
			// Brackets as well as underline: NO_COLOR drops the underline.
			parts = append(parts, st.TabActive.Render("["+label+"]"))
		} else {
			parts = append(parts, st.Tab.Render(label))
		}
	}
	if m.sweep != nil && m.state != nil {
		status := "running"
		switch {
		case m.state.Interrupted:
			status = "interrupted"
		case m.state.Finished:
			status = "finished"
		}
		// "done": the count is of trials finished, not running; a
		// cancelled trial is not one (a cancelled sweep read "18 of 18
		// done").
		info := fmt.Sprintf("%s · %d of %d done", status, m.state.Ran(), len(m.state.Order))
		if n := m.state.Counts[model.Cancelled]; n > 0 {
			info += fmt.Sprintf(", %d cancelled", n)
		}
		if m.width >= 100 {
			info = m.sweep.ID() + " " + info
		}
		parts = append(parts, st.Muted.Render(info))
	} else if m.loaded != nil && m.state != nil {
		parts = append(parts, st.Muted.Render(m.loaded.ID+" (read-only)"))
	}
	sep := "  "
	if m.width < 100 {
		sep = " "
	}
	return clip(strings.Join(parts, sep), m.width)
}

func (m Model) viewStatus() string {
	st := m.theme.Styles
	if m.confirm != nil {
		running, queued := 0, 0 // no sweep yet: F on setup asks before the first
		if m.state != nil && !m.state.Finished {
			running, queued = m.state.Running, m.state.Queued()
		}
		return st.Warn.Render(keepAnswer(m.confirm.text(running, queued), m.width))
	}
	var parts []string
	if n := m.notice(); n != "" {
		parts = append(parts, st.Warn.Render(n))
	}
	if m.host.MemTotal > 0 {
		// Fixed widths: 99% and 100%, 19.9GiB and 20GiB take the same
		// room, so what follows does not jitter as they change.
		parts = append(parts, fmt.Sprintf("host mem %7s free of %s · cpu %3.0f%%", model.FormatBytes(m.host.MemAvailable), model.FormatBytes(m.host.MemTotal), m.host.CPUPercent))
	}
	if m.state != nil && m.state.LastOOM != nil {
		o := m.state.LastOOM
		last := fmt.Sprintf("last OOM %s in %s", o.TrialID(), o.OOM.Step)
		v := m.state.Trials[o.TrialID()]
		if v != nil {
			// In words, as the cards name trials: the id is the detail view's.
			last = fmt.Sprintf("last OOM kill at %s, repeat %d, in %s", v.Trial.Ratio, v.Trial.Repeat, o.OOM.Step)
		}
		if v != nil {
			// What was killed, as the kernel's log and the process watch
			// named it since.
			if kills := v.TaskKills(); len(kills) > 0 && killedName(kills[len(kills)-1]) != "" {
				last += ": " + killedName(kills[len(kills)-1])
			}
		}
		parts = append(parts, st.OOM.Render(last))
	}
	// The theme's name is the least of it: it goes first, and whole,
	// when the line has no room for it (never cut to "· th…").
	line := strings.Join(parts, " · ")
	theme := st.Muted.Render("theme " + m.theme.Name)
	if n := m.notice(); n == "theme "+m.theme.Name {
		theme = "" // t just said it: not twice
	} else if themes.NoColor() {
		theme = st.Muted.Render("no colour (NO_COLOR)")
		if strings.Contains(n, "NO_COLOR") {
			theme = ""
		}
	}
	if theme == "" {
		return clip(line, m.width)
	}
	if len(parts) == 0 {
		return clip(theme, m.width)
	}
	if with := line + " · " + theme; width(with) <= m.width {
		return with
	}
	return clip(line, m.width)
}

// viewFooter is the screen's short help, cut from its own end (never
// help and quit) until it fits.
func (m Model) viewFooter() string {
	km := m.screenKeys()
	if km == nil {
		return ""
	}
	own := km.ShortHelp()
	var tab []key.Binding
	if m.screen != SetupScreen && m.screen != DetailScreen {
		tab = []key.Binding{m.keys.Global.Next}
	}
	hm := m.help
	hm.Width = 0 // measured here: help's own cut would drop help and quit
	// tab goes first, then the screen's own keys from the end; help and
	// quit always stay.
	for n := len(own); ; {
		line := hm.ShortHelpView(append(append(append([]key.Binding{}, own[:n]...), tab...), m.keys.Global.ShortHelp()...))
		if width(line) <= m.width || (n == 0 && tab == nil) {
			return clip(line, m.width)
		}
		if tab != nil {
			tab = nil
		} else {
			n--
		}
	}
}

// screenKeys is the key map of what has the keyboard now: the screen's
// own (a Component is a help.KeyMap).
func (m Model) screenKeys() help.KeyMap {
	if m.confirm != nil {
		return nil
	}
	// What stops a sweep or reaches into its containers is offered
	// while it runs: a finished sweep's footer offered "x stop trial • X
	// cancel sweep • s shell", and focus "x stop the loop".
	switch {
	case !m.Running() && m.screen == LiveScreen:
		k := m.live.keys
		k.Stop.SetEnabled(false)
		k.CancelSweep.SetEnabled(false)
		k.Shell.SetEnabled(false)
		return k
	case m.screen == FocusScreen && (!m.Running() || m.spec.Label != "focus"):
		// Focus's x stops the focus loop alone, not a setup's sweep.
		k := m.focus.keys
		k.Stop.SetEnabled(false)
		return k
	case m.screen == DetailScreen && m.detail.v != nil && !m.opts.loaded(m.detail.v.Trial.Task):
		// No rerun of a task this console did not load (a past
		// experiment's): r was offered, then failed.
		k := m.detail.helpKeys()
		k.Rerun.SetEnabled(false)
		return k
	}
	return m.component(m.screen)
}

func (m Model) screenName() string {
	if t, ok := m.component(m.screen).(titler); ok && t.title() != "" {
		return t.title()
	}
	return screenNames[m.screen]
}

// termer is a screen with words of its own, glossed in its help.
type termer interface{ terms() []model.Term }

// viewHelp is the help page of the screen shown, generated from its key
// map and the global one; a global key the screen takes for itself (tab
// on setup) is left out.
func (m Model) viewHelp(w, h int) string {
	st := m.theme.Styles
	var lines []string
	group := func(name string, groups [][]key.Binding, skip map[string]bool) {
		lines = append(lines, st.Bold.Render(name))
		for _, g := range groups {
			for _, kb := range g {
				hk := kb.Help()
				if !kb.Enabled() || skip[hk.Key] {
					continue
				}
				lines = append(lines, fmt.Sprintf("  %-13s %s", hk.Key, st.Muted.Render(hk.Desc)))
			}
		}
		lines = append(lines, "")
	}
	own := map[string]bool{}
	if km := m.screenKeys(); km != nil {
		group(m.screenName(), km.FullHelp(), nil)
		for _, g := range km.FullHelp() {
			for _, kb := range g {
				for _, k := range kb.Keys() {
					own[k] = true
				}
			}
		}
	}
	skip := map[string]bool{}
	for _, g := range m.keys.Global.FullHelp() {
		for _, kb := range g {
			for _, k := range kb.Keys() {
				if own[k] {
					skip[kb.Help().Key] = true
				}
			}
		}
	}
	if m.screen == SetupScreen || m.screen == DetailScreen {
		skip["tab"], skip["shift+tab"] = true, true
	}
	group("everywhere", m.keys.Global.FullHelp(), skip)
	lines = append(lines, st.Muted.Render("esc or ? closes this help"))
	head := st.Title.Render("Keys · " + m.screenName())
	keysH := h - 1
	// A screen with words of its own glosses them above its keys, the
	// whole width (a column would cut them).
	if t, ok := m.component(m.screen).(termer); ok && m.confirm == nil {
		var terms []string
		for _, term := range t.terms() {
			for i, l := range wrapWords(term.Gloss, max(w-16, 20), "") {
				word := ""
				if i == 0 {
					word = term.Word
				}
				terms = append(terms, "  "+st.Bold.Render(pad(word, 13))+" "+st.Muted.Render(l))
			}
		}
		head += "\n" + st.Bold.Render("Terms") + "\n" + strings.Join(terms, "\n") + "\n"
		keysH -= len(terms) + 2
	}
	return fit(head+"\n"+columns(lines, w, keysH), w, h)
}

// columns flows lines into as many columns of h lines as they need.
func columns(lines []string, w, h int) string {
	if len(lines) <= h || h < 1 {
		return strings.Join(lines, "\n")
	}
	var cols []string
	for i := 0; i < len(lines); i += h {
		col := lines[i:min(i+h, len(lines))]
		cw := 0
		for _, l := range col {
			cw = max(cw, width(l))
		}
		for j := range col {
			col[j] = pad(col[j], cw+3)
		}
		cols = append(cols, strings.Join(col, "\n"))
	}
	return joinHorizontal(cols)
}
