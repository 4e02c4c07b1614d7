package runner

import (
	"errors"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// RootUser says whether user (a name or uid, with or without a group) is
// root: "" keeps the engine's default, root.
func RootUser(user string) bool {
	name, _, _ := strings.Cut(user, ":")
	return name == "" || name == "0" || name == "root"
}

// CanSwitchUser says whether the root of the task's container may change
// its user (CAP_SETUID and CAP_SETGID): under the harbor profile the
// engine's default capabilities hold both; a hardened container only
// those the task keeps (the built-in image's none: its driver stays the
// container's user, nobody, as before). Both backends run the step driver
// (the probe) as root by it, and each step as the container's user.
func CanSwitchUser(task model.Task) bool {
	return !task.Hardened() || slices.Contains(task.Capabilities, "SETUID") && slices.Contains(task.Capabilities, "SETGID")
}

// CheckStepUser asks a step driver (ask: its OpUser, the exit code and
// each line it said) whether user is one a step can run as, once at a
// trial's start: an unknown one is the runtime's error for a container
// whose USER it cannot find ("unable to find user …", in the driver's
// words, up to 512 bytes of them), not a failure of every step.
func CheckStepUser(user string, ask func(line func(stream, text string)) (int, error)) error {
	var said strings.Builder
	code, err := ask(func(_, text string) {
		if said.Len() < 512 {
			said.WriteString(text)
		}
	})
	switch {
	case err != nil:
		return err
	case code != 0:
		if said.Len() == 0 {
			said.WriteString("unable to find user " + user)
		}
		return errors.New(strings.TrimSpace(said.String()))
	}
	return nil
}
