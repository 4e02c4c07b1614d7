package docker

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/network"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload"
)

// SetNetworkPolicy gives the running container a phase's network policy,
// as Harbor's phase overrides do: no-network disconnects it from every
// network (only lo is left); public and allowlist connect it again to
// what it had, and an allowlist is then enforced inside its own network
// namespace by a NET_ADMIN helper (workload.NetPolicyMode).
//
// The network knobs follow every change: the helper shapes the
// interfaces the change added and records what it measured through them
// (knobKit.reshape).
func (s *sandbox) SetNetworkPolicy(ctx context.Context, p model.NetworkPolicy) error {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	if err := s.setNetworkPolicy(ctx, p); err != nil {
		return err
	}
	return s.kit.reshape(ctx, "the change to "+p.String())
}

func (s *sandbox) setNetworkPolicy(ctx context.Context, p model.NetworkPolicy) error {
	if p.Mode == model.NetworkAllowlist {
		// The task's services too, where their network leads nowhere else.
		p.AllowedHosts = append(append([]string(nil), p.AllowedHosts...), s.side.reachable()...)
	}
	if p.Mode == model.NetworkNone {
		if s.detached != nil {
			return nil
		}
		info, err := s.b.cli.ContainerInspect(ctx, s.id)
		if err != nil {
			return fmt.Errorf("no-network: %w", err)
		}
		nets := map[string]*network.EndpointSettings{}
		if info.NetworkSettings != nil {
			for name, ep := range info.NetworkSettings.Networks {
				if name == "none" || name == "host" {
					continue
				}
				nets[name] = &network.EndpointSettings{Aliases: ep.Aliases}
			}
		}
		for name := range nets {
			s.stops.disconnecting(name, true)
			if err := s.b.cli.NetworkDisconnect(ctx, name, s.id, true); err != nil {
				return fmt.Errorf("no-network: disconnecting from %s: %w", name, err)
			}
		}
		s.detached = nets
		return nil
	}
	for name, ep := range s.detached {
		if err := s.b.cli.NetworkConnect(ctx, name, s.id, ep); err != nil {
			return fmt.Errorf("%s: connecting to %s again: %w", p.Mode, name, err)
		}
		s.stops.disconnecting(name, false)
	}
	s.detached = nil
	switch {
	case p.Mode == model.NetworkAllowlist:
		if _, err := s.RunNetnsHelper(ctx, workload.NetPolicyMode, append([]string{"allow"}, p.AllowedHosts...)...); err != nil {
			return fmt.Errorf("allowed_hosts cannot be enforced: %w", err)
		}
		s.filtered = true
	case s.filtered:
		if _, err := s.RunNetnsHelper(ctx, workload.NetPolicyMode, "allow-all"); err != nil {
			return fmt.Errorf("public: lifting the allowlist: %w", err)
		}
		s.filtered = false
	}
	return nil
}
