package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
)

// ownerAlive says whether the headroom process that labelled a container
// still runs (runner.OwnerAlive).
func ownerAlive(owner string) bool { return runner.OwnerAlive(owner) }

// OwnerAlive says whether the headroom that labelled a container with
// this owner still runs (see ownerAlive).
func OwnerAlive(labels map[string]string) bool { return ownerAlive(labels[runner.LabelOwner]) }

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
	list, err := e.Cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", runner.LabelHeadroom))})
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, c := range list {
		if c.Labels[runner.LabelKept] != "" || ownerAlive(c.Labels[runner.LabelOwner]) {
			continue
		}
		if err := e.Cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !docker.IsGone(err) {
			return out, fmt.Errorf("remove leftover %.12s: %w", c.ID, err)
		}
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, Leftover{ID: c.ID, Name: name, Experiment: c.Labels[runner.LabelExperiment], Trial: c.Labels[runner.LabelTrial]})
	}
	// The trials' networks and volumes (compose environments), once their
	// containers are gone.
	res, err := docker.RemoveTrialResources(ctx, e.Cli, func(l map[string]string) bool {
		return l[runner.LabelKept] != "" || ownerAlive(l[runner.LabelOwner])
	}, false)
	for _, r := range res {
		out = append(out, Leftover{ID: r.ID, Name: r.Name, Experiment: r.Labels[runner.LabelExperiment], Trial: r.Labels[runner.LabelTrial], Kind: r.Kind})
	}
	return out, err
}
