package docker

import (
	"context"
	"fmt"
	"path"
	"runtime"
	"slices"

	"github.com/docker/docker/api/types/mount"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload"
)

// TaskDriverPath is where the step driver is mounted in a task image's
// container: a read-only bind of headroom's own static binary, named so
// that it runs as the workload binary (main dispatches on the name).
var TaskDriverPath = path.Join("/.headroom", path.Base(workload.Binary))

// defaultIdle is the idle command task images get when their file names
// none; a task that names its own (a service as PID 1) keeps it, and exec.
var defaultIdle = []string{"sleep", "infinity"}

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
	case !slices.Equal(task.IdleCommand, defaultIdle):
		return nil, "the task names its own idle command"
	case task.ForeignHarness():
		return nil, "the image's own entrypoint runs first (it may start the task's services)"
	}
	if why := b.imageRunsDriver(ctx, task.Image); why != "" {
		return nil, why
	}
	return &mount.Mount{Type: mount.TypeBind, Source: b.opts.DriverBinary, Target: TaskDriverPath, ReadOnly: true}, ""
}

// imageRunsDriver checks, once per image, that the image is a Linux image
// of this machine's architecture ("" when it is).
func (b *Backend) imageRunsDriver(ctx context.Context, image string) string {
	b.mu.Lock()
	why, ok := b.driverImages[image]
	b.mu.Unlock()
	if ok {
		return why
	}
	ins, err := b.cli.ImageInspect(ctx, image)
	switch {
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
	b.driverImages[image] = why
	b.mu.Unlock()
	return why
}

// CheckDriverBinary says whether binary can be the step driver in any
// Linux image: a static executable.
func CheckDriverBinary(binary string) error { return checkStatic(binary) }
