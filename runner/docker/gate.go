package docker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// gateFirstProcess is how a trial's first process, the task's own code,
// is held back by headroom's gate (workload.GateMode) until its first
// network policy is in force: the mount that puts the gate in the
// container and the command that runs the task's first process through
// it (the image's ENTRYPOINT where the task keeps it, then the command).
// nil where the gate cannot run there (no static binary on the engine's
// host, an image of another system or architecture): the container then
// starts with no network instead.
func (b *Backend) gateFirstProcess(ctx context.Context, task model.Task, cfg *container.Config) (*mount.Mount, []string) {
	if b.opts.DriverBinary == "" || task.Image == "" {
		return nil, nil
	}
	if why := b.imageRunsDriver(ctx, task.ImageRef(), false); why != "" {
		return nil, nil
	}
	first := slices.Concat(cfg.Entrypoint, cfg.Cmd)
	if cfg.Entrypoint == nil {
		// The image's own, from the inspect imageRunsDriver made.
		img := b.inspectImage(ctx, task.ImageRef())
		first = slices.Concat(img.entrypoint, cfg.Cmd)
		if cfg.Cmd == nil {
			first = slices.Concat(img.entrypoint, img.cmd)
		}
	}
	if len(first) == 0 {
		return nil, nil
	}
	argv := append([]string{runner.TaskDriverPath, workload.GateMode, "--"}, first...)
	return &mount.Mount{Type: mount.TypeBind, Source: b.opts.DriverBinary, Target: runner.TaskDriverPath, ReadOnly: true}, argv
}

// gateReleaseWait bounds the wait for a gated first process to go.
const gateReleaseWait = 30 * time.Second

// releaseGate lets a gated trial's first process run and waits until it
// has (the container's first process is no longer the gate): a release
// sent before the gate could hear it is sent again.
func (b *Backend) releaseGate(ctx context.Context, sb *sandbox) error {
	id := sb.id
	deadline := time.Now().Add(gateReleaseWait)
	for {
		sb.stops.releasing()
		if err := b.cli.ContainerKill(ctx, id, workload.GateRelease); err != nil {
			if IsGone(err) || strings.Contains(err.Error(), "is not running") {
				return nil
			}
			return fmt.Errorf("letting the task's first process run: %w", err)
		}
		top, err := b.cli.ContainerTop(ctx, id, nil)
		if err != nil {
			// Ended already: what it did is the trial's to read.
			return nil
		}
		if !gateStillFirst(top) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the task's first process was not let run in %s (headroom's gate did not answer its release)", gateReleaseWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// gateStillFirst says whether the container's processes still show the
// gate waiting.
func gateStillFirst(top container.TopResponse) bool {
	col := slices.Index(top.Titles, "CMD")
	if col < 0 {
		col = slices.Index(top.Titles, "COMMAND")
	}
	for _, p := range top.Processes {
		if col >= 0 && col < len(p) && strings.Contains(p[col], runner.TaskDriverPath+" "+workload.GateMode+" --") {
			return true
		}
	}
	return false
}
