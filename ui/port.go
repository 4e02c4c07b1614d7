package ui

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/headroom-eval/headroom/model"
)

// Port is the console's one way out: everything it asks of the world it
// runs in — start or resume a sweep, the host's load, the store's past
// experiments, a shell in a container, a task file read again, the
// backend's own words for a policy. cli answers it from the engine, the
// store and the host; tests answer it from fixtures. A method's zero
// answer means "none here": the console then hides what it would show.
type Port interface {
	// Launch starts a sweep in the background.
	Launch(LaunchSpec) (Sweep, error)
	// Resume reruns what an interrupted experiment is missing.
	Resume(Experiment) (Sweep, error)
	// HostStat is the host's load now, shown because a loaded host is
	// noise; false hides it (and it is not asked again).
	HostStat() (HostStat, bool)
	// History lists past experiments, for the history screen.
	History() ([]Experiment, error)
	// Shell is the command that opens a shell in a running trial's
	// container, or an error saying why it cannot (no shell in a FROM
	// scratch image, no engine).
	Shell(containerID string, task model.Task) (*exec.Cmd, error)
	// Respec reads a task's resources as its own file says them now
	// (false: as loaded): a spec written since (calibrate --write) is what
	// setup shows and what a sweep runs.
	Respec(model.Task) (model.Resources, bool)
	// ImageNote says what choosing a task prepares first, when its image
	// is not on the engine yet (the real tasks' Debian image), or "".
	ImageNote(model.Task) string
	// PolicyArgs are the backend's own settings for a policy (docker run
	// flags, a pod's resources), shown beside each ratio.
	PolicyArgs(model.ResourcePolicy) []string
	// Reproduce is the backend's command that runs a task's (by name)
	// image under a policy outside headroom, or "".
	Reproduce(task, image string, p model.ResourcePolicy) string
	// Preparing is the latest line of image preparation while a sweep is
	// starting (a Dockerfile build, debootstrap), or "".
	Preparing() string
}

// noPort is a console with nothing behind it (a zero Options): it shows
// what it is given and starts nothing.
type noPort struct{}

var errNoEngine = errors.New("no engine: this console cannot start sweeps")

// ErrUnavailable is a Port's answer for what this console does not have
// (no store to list, no engine to open a shell on).
var ErrUnavailable = errors.New("not available in this console")

func (noPort) Launch(LaunchSpec) (Sweep, error) { return nil, errNoEngine }
func (noPort) Resume(Experiment) (Sweep, error) {
	return nil, fmt.Errorf("resume: %w", ErrUnavailable)
}
func (noPort) HostStat() (HostStat, bool)                            { return HostStat{}, false }
func (noPort) History() ([]Experiment, error)                        { return nil, ErrUnavailable }
func (noPort) Respec(model.Task) (model.Resources, bool)             { return model.Resources{}, false }
func (noPort) ImageNote(model.Task) string                           { return "" }
func (noPort) PolicyArgs(model.ResourcePolicy) []string              { return nil }
func (noPort) Reproduce(string, string, model.ResourcePolicy) string { return "" }
func (noPort) Preparing() string                                     { return "" }
func (noPort) Shell(string, model.Task) (*exec.Cmd, error) {
	return nil, ErrUnavailable
}

// port is o's Port, or noPort when none was given.
func (o *Options) port() Port {
	if o == nil || o.Port == nil {
		return noPort{}
	}
	return o.Port
}
