package runner

import (
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
