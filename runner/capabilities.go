package runner

import (
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// TracingCapability is the capability a task is granted, as its file
// spells it, that lets its processes trace (or open the descriptors of)
// another process of its container — SYS_PTRACE, or ALL — "" for none:
// with it, headroom's step driver or probe in the container could be read
// and answered for, so both backends run such a task's steps by exec.
func TracingCapability(task model.Task) string {
	for _, c := range task.Capabilities {
		switch strings.TrimPrefix(strings.ToUpper(c), "CAP_") {
		case "SYS_PTRACE", "ALL":
			return c
		}
	}
	return ""
}
