package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// Component is one screen of the console, after soft-serve's
// ui/common.Component: its own state and key map (which feeds the footer
// and `?`), its own size, and a view. It reads what the screens share
// from Common and changes nothing outside itself: what it wants of the
// console (a notice, a confirmation, a sweep, a trial opened) it sends to
// the root as a message. Update gets the keys while the screen is shown,
// and every screen gets the messages that concern it whichever is shown
// (the store's list of experiments, a trial opened or closed, the sweep's
// state changed): the root knows no screen's insides.
type Component interface {
	help.KeyMap
	SetSize(width, height int)
	Update(c *Common, msg tea.Msg) tea.Cmd
	View(c *Common) string
}

// Common is what the screens share, made by the root for each call: the
// theme, the options, the sweep and the clock. Screens send their
// requests through it; the root handles them, in order, as messages once
// the screen's update has returned.
type Common struct {
	Theme   themes.Theme
	Opts    *Options
	State   *SweepState
	Spec    LaunchSpec
	Host    HostStat
	Now     time.Time
	Frame   int
	Running bool
	// Loaded is the experiment opened from history, if any.
	Loaded *Experiment

	outbox []tea.Msg
}

// regimeTasks are the tasks whose images say which replay a repeat: the
// sweep's, or, opened from history, the manifest's (without them the
// console paired nothing the report paired: "unpaired" beside the
// report's "2 rescued", a new user's).
func (c *Common) regimeTasks() []model.Task {
	if len(c.Spec.Tasks) > 0 || c.Loaded == nil {
		return c.Spec.Tasks
	}
	var tasks []model.Task
	for name, image := range c.Loaded.Images {
		tasks = append(tasks, model.Task{Name: name, Image: image})
	}
	return tasks
}

// typoNotes are, by task name, what a suspected typo in the task's file
// did to its trials (model.TypoNote): the sweep's tasks', or, opened
// from history, the manifest's.
func (c *Common) typoNotes() map[string]string {
	if len(c.Spec.Tasks) == 0 && c.Loaded != nil {
		return c.Loaded.Typos
	}
	out := map[string]string{}
	for _, t := range c.Spec.Tasks {
		if n := model.TypoNote(t.Deviations, t.Resources); n != "" {
			out[t.Name] = n
		}
	}
	return out
}

// Styles are the theme's styles.
func (c *Common) Styles() themes.Styles { return c.Theme.Styles }

// send asks the root for something: one of the request messages below.
func (c *Common) send(msg tea.Msg) { c.outbox = append(c.outbox, msg) }

// say puts a notice on the status line.
func (c *Common) say(text string) { c.send(noticeMsg(text)) }

// requests are what the screens asked of the root through c, each as a
// command that hands it back as a message.
func (c *Common) requests() []tea.Cmd {
	var cmds []tea.Cmd
	for _, req := range c.outbox {
		cmds = append(cmds, func() tea.Msg { return req })
	}
	return cmds
}

// Requests a screen sends to the root.
type (
	// noticeMsg is a notice for the status line.
	noticeMsg string
	// confirmMsg asks y/n first; yes is handled as a message on y.
	confirmMsg struct {
		prompt string
		yes    tea.Msg
	}
	// stopTrialMsg stops one trial (recorded as cancelled).
	stopTrialMsg struct{ id string }
	// openShellMsg opens a shell in a running trial's container.
	openShellMsg struct{ id string }
	// cancelSweepMsg cancels the sweep.
	cancelSweepMsg struct{}
	// openTrialMsg opens a trial's detail.
	openTrialMsg struct{ v *TrialView }
	// closeTrialMsg leaves the detail for the screen it was opened from.
	closeTrialMsg struct{}
	// launchMsg starts a sweep.
	launchMsg struct{ spec LaunchSpec }
	// focusMsg starts focus mode on one task·agent at one ratio.
	focusMsg struct {
		task  model.Task
		agent string
		ratio model.Ratio
		// scale is what the ratio limits: the cell's own sweep's from
		// the matrix (not setup's, which may since have changed), setup's
		// from setup.
		scale model.Scale
		// confirmed: asked and answered y (a loop of many runs starts).
		confirmed bool
	}
	// rerunMsg replays one trial exactly.
	rerunMsg struct{ v *TrialView }
	// resumeMsg reruns what an interrupted experiment is missing.
	resumeMsg struct{ exp Experiment }
	// openExperimentMsg opens a past experiment read-only.
	openExperimentMsg struct{ exp Experiment }
)

// respecMsg tells the screens the tasks' resources may have changed in
// their files since they were loaded (Options.Respec).
type respecMsg struct{}

// typer is a screen whose text entry, while open, takes every key.
type typer interface{ typing() bool }

// titler is a screen whose title says more than its tab's name (a
// matrix cell's trials, a trial's detail); "" keeps the tab's name.
type titler interface{ title() string }

// stateChangedMsg tells the screens the sweep's state (Common.State) has
// taken new events or a new reading of an experiment followed as it runs.
type stateChangedMsg struct{}
