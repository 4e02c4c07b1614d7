package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// mountHarnessVolumes makes an empty volume of the trial's at each of the
// task's harness mounts (model.Task.HarnessMounts) and mounts it in hc:
// where the harness bind-mounts a directory of its host, a mount point
// here too, so that a rename or hard link into it from the container's
// own file system fails with EXDEV and removing it with EBUSY, as there.
// Empty, as a bind mount hides what the image has at the path (no copy).
// It returns the volumes' names; on an error none is left.
func (b *Backend) mountHarnessVolumes(ctx context.Context, labels map[string]string, name string, task model.Task, hc *container.HostConfig) ([]string, error) {
	eng, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var made []string
	for i, at := range task.HarnessMounts {
		v, err := b.cli.VolumeCreate(eng, volume.CreateOptions{Name: fmt.Sprintf("%s-logs%d", name, i+1), Labels: labels})
		if err != nil {
			_ = b.removeVolumes(context.Background(), made)
			return nil, fmt.Errorf("create the trial's volume at %s (where the task's harness mounts a directory of its host): %w", at, err)
		}
		if v.Labels[runner.LabelOwner] != labels[runner.LabelOwner] || v.Labels[runner.LabelTrial] != labels[runner.LabelTrial] {
			// The engine hands back a volume of that name that is
			// already there: someone else's, or a dead run's with what
			// its trial wrote. Neither is this trial's to use or remove.
			_ = b.removeVolumes(context.Background(), made)
			return nil, fmt.Errorf("create the trial's volume at %s: a volume named %s is already on the engine and headroom did not make it for this trial: remove it if it is yours (`docker volume rm %s`), or run `headroom clean`", at, v.Name, v.Name)
		}
		made = append(made, v.Name)
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Source: v.Name, Target: at,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true}})
	}
	return made, nil
}

// removeVolumes removes volumes of the trial's once its containers are
// gone; one still in use (a kept container's) is left for the reaper.
func (b *Backend) removeVolumes(ctx context.Context, names []string) error {
	var errs []error
	for _, v := range names {
		if err := removeTrialResource(ctx, b.cli, TrialResource{Kind: "volume", ID: v, Name: v}); err != nil && !errors.Is(err, runner.ErrInUse) {
			errs = append(errs, fmt.Errorf("remove the trial's volume %s: %w", v, err))
		}
	}
	return errors.Join(errs...)
}
