package docker

import (
	"context"

	"github.com/docker/docker/api/types/container"
	"github.com/headroom-eval/headroom/runner"
)

// removeDeadNamesake removes the container holding name when the headroom
// that made it is gone and it was not kept, and says whether it did.
// Another live run's container of that name is never touched.
func (b *Backend) removeDeadNamesake(ctx context.Context, name string) bool {
	info, err := b.cli.ContainerInspect(ctx, name)
	if err != nil || info.Config == nil {
		return false
	}
	labels := info.Config.Labels
	if labels[runner.LabelHeadroom] == "" || labels[runner.LabelKept] != "" || runner.OwnerAlive(labels[runner.LabelOwner]) {
		return false
	}
	err = b.cli.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true})
	return err == nil || IsGone(err)
}
