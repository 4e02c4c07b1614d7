package docker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"maps"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/runner"
)

// ownLabels are a container's labels less headroom's owner and kept
// labels where they are the image's own (a Dockerfile's LABEL): a
// container's labels are its image's merged under its own, and only
// what headroom set when it made the container says whose it is and
// whether it was kept. An image's LABEL headroom.kept=1 would make a
// crashed run's container immortal, and a LABEL headroom.owner naming a
// dead process would make anyone's container of that image a leftover.
// headroom sets both on every container it makes, so its own are never
// the image's (but for --keep of an image that claims to be kept too:
// not kept, then, as any other of that image).
func ownLabels(ctx context.Context, cli *client.Client, imageID string, labels map[string]string, images map[string]map[string]string) map[string]string {
	if labels[runner.LabelOwner] == "" && labels[runner.LabelKept] == "" {
		return labels
	}
	img, ok := images[imageID]
	if !ok {
		if ins, err := cli.ImageInspect(ctx, imageID); err == nil && ins.Config != nil {
			img = ins.Config.Labels
		}
		if images != nil {
			images[imageID] = img
		}
	}
	out := labels
	for _, k := range []string{runner.LabelOwner, runner.LabelKept} {
		if v, from := img[k]; from && labels[k] == v {
			if maps.Equal(out, labels) {
				out = maps.Clone(labels)
			}
			delete(out, k)
		}
	}
	return out
}

// removeDeadNamesake removes the container holding name when the headroom
// that made it is gone and it was not kept, and says whether it did.
// Another live run's container of that name is never touched. pending
// says the name is held by no container the engine shows yet: a create
// still under way (a headroom killed as it asked for it), which the
// caller waits out and tries again.
func (b *Backend) removeDeadNamesake(ctx context.Context, name string) (removed, pending bool) {
	info, err := b.cli.ContainerInspect(ctx, name)
	if IsGone(err) {
		return false, true
	}
	if err != nil || info.Config == nil {
		return false, false
	}
	labels := ownLabels(ctx, b.cli, info.Image, info.Config.Labels, nil)
	if labels[runner.LabelHeadroom] == "" || labels[runner.LabelKept] != "" || runner.OwnerAlive(labels[runner.LabelOwner]) {
		return false, false
	}
	err = b.cli.ContainerRemove(ctx, info.ID, removeOptions)
	if err == nil || IsGone(err) {
		return true, false
	}
	// The dead run's own removal, still under way (it asked just before it
	// died; the reaper, told the same, counted it removed): the name is
	// free once the engine is done with it.
	if cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress") {
		return b.waitRemoved(ctx, info.ID, 30*time.Second), false
	}
	return false, false
}

// createFreeingDeadNamesake retries a create that met a Conflict on its
// name while a dead headroom's container holds it (removed) or a create
// of it is still under way in the engine (waited out: 10 s at most).
func (b *Backend) createFreeingDeadNamesake(ctx context.Context, name string, create func() (container.CreateResponse, error)) (container.CreateResponse, error) {
	created, err := create()
	deadline := time.Now().Add(10 * time.Second)
	for err != nil && cerrdefs.IsConflict(err) && time.Now().Before(deadline) {
		removed, pending := b.removeDeadNamesake(ctx, name)
		if !removed && !pending {
			break
		}
		if pending {
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return created, err
			}
		}
		created, err = create()
	}
	return created, err
}

// waitRemoved waits, at most bound, for the engine to have removed the
// container id; it says whether it did.
func (b *Backend) waitRemoved(ctx context.Context, id string, bound time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	waitCh, errCh := b.cli.ContainerWait(ctx, id, container.WaitConditionRemoved)
	select {
	case <-waitCh:
		return true
	case err := <-errCh:
		if IsGone(err) {
			return true // gone before the wait began
		}
		// The wait itself failed (the engine's answer, or the bound):
		// look once more.
		_, ierr := b.cli.ContainerInspect(context.WithoutCancel(ctx), id)
		return IsGone(ierr)
	}
}

// freeName is the name a trial's container (and its sidecars, network
// and volumes, named after it) is created under: base, unless a container
// an earlier run of the experiment kept (--keep) holds it; then base-2,
// base-3…, the first no kept container holds. The user asked to keep
// that one for inspection under its name, so a resume's rerun of the
// trial gets a fresh one rather than a name conflict (or the kept one
// removed). The kept containers are listed once per experiment, at its
// first trial: this run's own have other trials' names.
func (b *Backend) freeName(ctx context.Context, experiment, base string) string {
	b.mu.Lock()
	kept, ok := b.keptNames[experiment]
	b.mu.Unlock()
	if !ok {
		kept = map[string]bool{}
		list, err := b.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
			filters.Arg("label", runner.LabelExperiment+"="+experiment), filters.Arg("label", runner.LabelKept+"=1"))})
		if err != nil {
			return base // the create says what is wrong
		}
		for _, c := range list {
			if c.Labels[runner.LabelHeadroom] == "" {
				continue
			}
			for _, n := range c.Names {
				kept[strings.TrimPrefix(n, "/")] = true
			}
		}
		b.mu.Lock()
		if b.keptNames == nil {
			b.keptNames = map[string]map[string]bool{}
		}
		b.keptNames[experiment] = kept
		b.mu.Unlock()
	}
	if !kept[base] {
		return base
	}
	for n := 2; ; n++ {
		if name := fmt.Sprintf("%s-%d", base, n); !kept[name] {
			return name
		}
	}
}

// nameTaken is a create's Conflict on a name that no dead headroom holds
// (createFreeingDeadNamesake gave up on it, or it was never ours): a
// container someone else made under the name headroom gives this trial.
// It is left alone.
func nameTaken(what, name string, err error) error {
	return fmt.Errorf("creating %s: %w (%s), so the trial could not start; that container is left as it is (`docker inspect %s` says what it is): %v", what, runner.ErrNameTaken, name, name, err)
}
