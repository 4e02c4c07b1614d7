package docker

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

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
		// Names are resolved here, by headroom's own resolver with the
		// host's configuration, and the helper is given addresses only:
		// the trial's /etc/hosts and /etc/resolv.conf, which the helper
		// would share, are written by the trial's root.
		entries, _ := allowlistEntries(ctx, p.AllowedHosts, net.DefaultResolver.LookupIPAddr, engineNameServers(os.ReadFile))
		if _, err := s.RunNetnsHelper(ctx, workload.NetPolicyMode, append([]string{"allow"}, entries...)...); err != nil {
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

// lookupTimeout bounds the host's lookup of one allowed name.
const lookupTimeout = 10 * time.Second

// allowlistEntries turns a task's allowed_hosts into the netpolicy
// helper's entries: addresses and CIDR ranges as written, names by
// lookup (the host's resolver: never the trial's), and each of dns, the
// name servers the engine's resolver forwards to, as dns:ADDRESS (port
// 53 only), when any name was allowed, so names keep resolving in the
// trial. A name that does not resolve, or a wildcard, gives no address
// and a note.
func allowlistEntries(ctx context.Context, hosts []string, lookup func(context.Context, string) ([]net.IPAddr, error), dns []net.IP) (entries, notes []string) {
	named := false
	for _, h := range hosts {
		if _, n, err := net.ParseCIDR(h); err == nil {
			entries = append(entries, n.String())
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			entries = append(entries, ip.String())
			continue
		}
		if strings.HasPrefix(h, "*.") {
			notes = append(notes, h+": a wildcard names no address; not reachable")
			continue
		}
		named = true
		lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
		addrs, err := lookup(lctx, h)
		cancel()
		if err != nil || len(addrs) == 0 {
			notes = append(notes, fmt.Sprintf("%s: %v; not reachable", h, err))
			continue
		}
		var shown []string
		for _, a := range addrs {
			entries = append(entries, a.IP.String())
			shown = append(shown, a.IP.String())
		}
		notes = append(notes, h+" is "+strings.Join(shown, ", "))
	}
	if named {
		for _, ns := range dns {
			entries = append(entries, workload.DNSPrefix+ns.String())
		}
	}
	return entries, notes
}

// The files the engine takes its containers' name servers from: the
// host's, or systemd-resolved's list of its upstreams when the host's
// names only the local stub (as the engine does: libnetwork resolvconf).
const (
	hostResolvConf    = "/etc/resolv.conf"
	systemdResolvConf = "/run/systemd/resolve/resolv.conf"
)

// engineNameServers are the name servers a trial's resolver queries: on
// the trial's own network, the engine's embedded resolver at 127.0.0.11
// (over lo) forwards every name it does not know to these, from inside
// the trial's network namespace (docs/TASKS.md), so they must be let
// through, on port 53 only. They are the engine's rules over this
// host's files: the host's name servers but its loopback ones (the
// systemd-resolved stub's upstreams instead, when it names only the
// stub), or the engine's defaults when none is left.
func engineNameServers(read func(string) ([]byte, error)) []net.IP {
	host, _ := read(hostResolvConf)
	servers := nameServerLines(host)
	if len(servers) > 0 && allLoopback(servers) {
		if sd, err := read(systemdResolvConf); err == nil {
			servers = nameServerLines(sd)
		}
	}
	var out []net.IP
	for _, ip := range servers {
		if !ip.IsLoopback() {
			out = append(out, ip)
		}
	}
	if len(out) == 0 {
		// The engine's own defaults (libnetwork's resolvconf).
		out = []net.IP{net.ParseIP("8.8.8.8"), net.ParseIP("8.8.4.4")}
	}
	return out
}

// nameServerLines are a resolv.conf's nameserver addresses.
func nameServerLines(conf []byte) []net.IP {
	var out []net.IP
	sc := bufio.NewScanner(bytes.NewReader(conf))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			// An IPv6 server may carry a zone (fe80::1%eth0).
			addr, _, _ := strings.Cut(fields[1], "%")
			if ip := net.ParseIP(addr); ip != nil {
				out = append(out, ip)
			}
		}
	}
	return out
}

func allLoopback(ips []net.IP) bool {
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}
