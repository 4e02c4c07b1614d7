package docker

import (
	"context"
	"fmt"

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

// freeName is the name a trial's container (and its sidecars, network
// and volumes, named after it) is created under: base, unless a container
// an earlier run kept (--keep) holds it; then base-2, base-3…, the first
// no kept container holds. The user asked to keep that one for
// inspection under its name, so a resume's rerun of the trial gets a
// fresh one rather than a name conflict (or the kept one removed).
func (b *Backend) freeName(ctx context.Context, base string) string {
	kept := func(name string) bool {
		info, err := b.cli.ContainerInspect(ctx, name)
		if err != nil || info.Config == nil {
			return false
		}
		return info.Config.Labels[runner.LabelHeadroom] != "" && info.Config.Labels[runner.LabelKept] != ""
	}
	if !kept(base) {
		return base
	}
	for n := 2; n < 1000; n++ {
		if name := fmt.Sprintf("%s-%d", base, n); !kept(name) {
			return name
		}
	}
	return base
}
