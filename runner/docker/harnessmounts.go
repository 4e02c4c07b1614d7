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
		v, err := b.trialVolume(eng, fmt.Sprintf("%s-logs%d", name, i+1), labels, "the trial's volume at "+at+" (where the task's harness mounts a directory of its host)")
		if err != nil {
			_ = b.removeVolumes(context.Background(), made)
			return nil, err
		}
		made = append(made, v)
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Source: v, Target: at,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true}})
	}
	return made, nil
}

// trialVolume makes a volume of the trial's named name (what names it in
// an error) and returns its name. The engine hands back a volume of that
// name that is already there: someone else's, or a dead run's with what
// its trial wrote; neither is this trial's to use or remove, and the
// trial does not start.
func (b *Backend) trialVolume(ctx context.Context, name string, labels map[string]string, what string) (string, error) {
	v, err := b.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels})
	if err != nil {
		return "", fmt.Errorf("create %s: %w", what, err)
	}
	if v.Labels[runner.LabelOwner] != labels[runner.LabelOwner] || v.Labels[runner.LabelTrial] != labels[runner.LabelTrial] {
		return "", fmt.Errorf("create %s: a volume named %s is already on the engine and headroom did not make it for this trial: remove it if it is yours (`docker volume rm %s`), or run `headroom clean`", what, v.Name, v.Name)
	}
	return v.Name, nil
}

// The names of a trial's own objects (its container's name, name) and of
// its compose file's: each compose service's container and each compose
// volume is named under an infix none of headroom's own objects has
// (theirs: name-logsN, -disk, -netshape, -neighbour-N, -netpolicy-N,
// -verifier, -out), so that no compose name is one of them: a compose
// volume called logs1 was the trial's own /logs/verifier, and a service
// called verifier took the separate verifier's container's name (the
// twenty-second attacker's 1 and 2).
func composeServiceName(name, service string) string { return name + "-svc-" + service }
func composeVolumeName(name, vol string) string      { return name + "-vol-" + vol }

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
