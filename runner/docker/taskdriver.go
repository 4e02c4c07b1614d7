package docker

import (
	"cmp"
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
		return nil, cmp.Or(b.opts.NoDriver, "no static headroom binary on the engine's host")
	case !slices.ContainsFunc(idleCommands, func(c []string) bool { return slices.Equal(c, task.IdleCommand) }):
		return nil, "the task names its own idle command"
	case tracesDriver(task) != "":
		return nil, tracesDriver(task)
	}
	if why := b.imageRunsDriver(ctx, task.ImageRef(), task.ForeignHarness()); why != "" {
		return nil, why
	}
	return &mount.Mount{Type: mount.TypeBind, Source: b.opts.DriverBinary, Target: runner.TaskDriverPath, ReadOnly: true}, ""
}

// imageFacts is what one inspect of a task's image says that its trials'
// starts need: its system and architecture, its ENTRYPOINT and CMD (err:
// why it could not be inspected).
type imageFacts struct {
	err             error
	os, arch        string
	entrypoint, cmd []string
	user            string // its USER ("" for root)
	setsHome        bool   // its ENV sets HOME
}

// inspectImage inspects image once per backend: every trial of a task
// asks (imageRunsDriver, gateFirstProcess).
func (b *Backend) inspectImage(ctx context.Context, image string) imageFacts {
	b.mu.Lock()
	f, ok := b.images[image]
	b.mu.Unlock()
	if ok {
		return f
	}
	ins, err := b.cli.ImageInspect(ctx, image)
	f.err = err
	if err == nil {
		f.os, f.arch = ins.Os, ins.Architecture
		if ins.Config != nil {
			f.entrypoint, f.cmd, f.user = ins.Config.Entrypoint, ins.Config.Cmd, ins.Config.User
			f.setsHome = slices.ContainsFunc(ins.Config.Env, isHome)
		}
	}
	b.mu.Lock()
	if b.images == nil {
		b.images = map[string]imageFacts{}
	}
	b.images[image] = f
	b.mu.Unlock()
	return f
}

// imageRunsDriver checks that the image is a Linux image of this
// machine's architecture ("" when it is); a task from another
// benchmark's harness keeps its image's ENTRYPOINT (it may start the
// task's services), so there the driver can only be the first process
// of an image without one.
func (b *Backend) imageRunsDriver(ctx context.Context, image string, keepsEntrypoint bool) string {
	if why, ok := b.noDriverMount.Load(image); ok {
		return why.(string)
	}
	f := b.inspectImage(ctx, image)
	switch {
	case f.err == nil && keepsEntrypoint && len(f.entrypoint) > 0:
		return "the image's own ENTRYPOINT runs first, as in the task's harness"
	case f.err != nil:
		return fmt.Sprintf("image %s could not be inspected: %v", image, f.err)
	case f.os != "" && f.os != "linux":
		return "the image is for " + f.os
	case f.arch != "" && f.arch != runtime.GOARCH:
		return fmt.Sprintf("the image is %s, headroom %s", f.arch, runtime.GOARCH)
	}
	return ""
}

// CheckDriverBinary says whether binary can be the step driver in any
// Linux image: a static executable.
func CheckDriverBinary(binary string) error { return checkStatic(binary) }
