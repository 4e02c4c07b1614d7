package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/runner/docker"
)

// ownerAlive says whether the headroom process that labelled a container
// still runs (docker.OwnerAlive).
func ownerAlive(owner string) bool { return docker.OwnerAlive(owner) }

// OwnerAlive says whether the headroom that labelled a container with
// this owner still runs (see ownerAlive).
func OwnerAlive(labels map[string]string) bool { return ownerAlive(labels[docker.LabelOwner]) }

// Leftover is a container (or a trial's network or volume) a crashed
// headroom left behind.
type Leftover struct {
	ID, Name, Experiment, Trial string
	Kind                        string // "" (a container), "network", "volume"
}

// ReapLeftovers removes containers whose headroom process is gone (a
// SIGKILL, a closed terminal, a reboot). Kept containers (--keep) and
// those of live runs are left alone.
func (e *Engine) ReapLeftovers(ctx context.Context) ([]Leftover, error) {
	list, err := e.Cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelHeadroom))})
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, c := range list {
		if c.Labels[docker.LabelKept] != "" || ownerAlive(c.Labels[docker.LabelOwner]) {
			continue
		}
		if err := e.Cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !docker.IsGone(err) {
			return out, fmt.Errorf("remove leftover %.12s: %w", c.ID, err)
		}
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, Leftover{ID: c.ID, Name: name, Experiment: c.Labels[docker.LabelExperiment], Trial: c.Labels[docker.LabelTrial]})
	}
	// The trials' networks and volumes (compose environments), once their
	// containers are gone.
	res, err := docker.RemoveTrialResources(ctx, e.Cli, func(l map[string]string) bool {
		return l[docker.LabelKept] != "" || ownerAlive(l[docker.LabelOwner])
	}, false)
	for _, r := range res {
		out = append(out, Leftover{ID: r.ID, Name: r.Name, Experiment: r.Labels[docker.LabelExperiment], Trial: r.Labels[docker.LabelTrial], Kind: r.Kind})
	}
	return out, err
}
