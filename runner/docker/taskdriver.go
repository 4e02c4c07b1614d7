package docker

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/docker/docker/api/types/mount"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// idleCommands are the idle commands task images get when their file
// names none (headroom's, Harbor's compose `sh -c "sleep infinity"`); a
// task that names its own (a service as PID 1) keeps it, and exec.
var idleCommands = [][]string{{"sleep", "infinity"}, {"sh", "-c", "sleep infinity"}}

// taskDriver says whether a task image's trial runs its steps through the
// step driver, and the mount that puts the driver in the container; why
// not, when not (the record says exec then). The driver needs a local
// engine (the binary is a path on this host), an image of this machine's
// architecture and the default idle command, which it replaces.
func (b *Backend) taskDriver(ctx context.Context, task model.Task) (*mount.Mount, string) {
	switch {
	case b.opts.ExecSteps:
		return nil, "--exec-steps"
	case b.opts.DriverBinary == "":
		return nil, "no static headroom binary on the engine's host"
	case !slices.ContainsFunc(idleCommands, func(c []string) bool { return slices.Equal(c, task.IdleCommand) }):
		return nil, "the task names its own idle command"
	case tracesDriver(task) != "":
		return nil, tracesDriver(task)
	}
	if why := b.imageRunsDriver(ctx, task.Image, task.ForeignHarness()); why != "" {
		return nil, why
	}
	return &mount.Mount{Type: mount.TypeBind, Source: b.opts.DriverBinary, Target: runner.TaskDriverPath, ReadOnly: true}, ""
}

// imageRunsDriver checks, once per image, that the image is a Linux image
// of this machine's architecture ("" when it is); a task from another
// benchmark's harness keeps its image's ENTRYPOINT (it may start the
// task's services), so there the driver can only be the first process
// of an image without one.
func (b *Backend) imageRunsDriver(ctx context.Context, image string, keepsEntrypoint bool) string {
	key := fmt.Sprintf("%s|%v", image, keepsEntrypoint)
	b.mu.Lock()
	why, ok := b.driverImages[key]
	b.mu.Unlock()
	if ok {
		return why
	}
	ins, err := b.cli.ImageInspect(ctx, image)
	switch {
	case err == nil && keepsEntrypoint && ins.Config != nil && len(ins.Config.Entrypoint) > 0:
		why = "the image's own ENTRYPOINT runs first, as in the task's harness"
	case err != nil:
		why = fmt.Sprintf("image %s could not be inspected: %v", image, err)
	case ins.Os != "" && ins.Os != "linux":
		why = "the image is for " + ins.Os
	case ins.Architecture != "" && ins.Architecture != runtime.GOARCH:
		why = fmt.Sprintf("the image is %s, headroom %s", ins.Architecture, runtime.GOARCH)
	}
	b.mu.Lock()
	if b.driverImages == nil {
		b.driverImages = map[string]string{}
	}
	b.driverImages[key] = why
	b.mu.Unlock()
	return why
}

// CheckDriverBinary says whether binary can be the step driver in any
// Linux image: a static executable.
func CheckDriverBinary(binary string) error { return checkStatic(binary) }
