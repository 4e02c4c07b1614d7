package docker

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A task whose container's network is not open (allow_internet = false:
// "none"; a headroom task's trial-only beside its services; an allowlist)
// gets a trial network with no way out and no gateway on the host, for
// its services as much as for its container, which reaches out (its
// allowlist, a phase's network) through an egress network of its own.
// Before, only trial-only was internal, and an internal bridge still
// carried the host's gateway address.
func TestTrialNetworkLeadsNowhereWithoutANetwork(t *testing.T) {
	public := &model.NetworkPolicy{Mode: model.NetworkPublic}
	db := []model.Sidecar{{Name: "db"}}
	for _, c := range []struct {
		what           string
		task           model.Task
		closed, egress bool
	}{
		{"harbor allow_internet = false with services", model.Task{Network: "none", Sidecars: db}, true, false},
		{"headroom [[services]] with no network", model.Task{Network: model.NetworkTrialOnly, Sidecars: db}, true, false},
		{"no network, only named volumes", model.Task{Network: "none", Volumes: []model.VolumeMount{{Volume: "data", Target: "/data"}}}, true, false},
		{"an allowlist with services", model.Task{Network: "bridge", AllowedHosts: []string{"pypi.org"}, Sidecars: db}, true, true},
		{"no network with services, the agent's phase asks for one", model.Task{Network: "none", AgentNetwork: public, Sidecars: db}, true, true},
		{"no network, no services, the agent's phase asks for one", model.Task{Network: "none", AgentNetwork: public}, false, false},
		{"an allowlist, no services", model.Task{Network: "bridge", AllowedHosts: []string{"pypi.org"}}, false, false},
		{"a network of its own with services", model.Task{Network: "bridge", Sidecars: db}, false, false},
	} {
		opts := trialNetworkOptions(c.task, map[string]string{"headroom": "1"})
		if opts.Labels["headroom"] != "1" || opts.Driver != "bridge" {
			t.Errorf("%s: driver %q labels %v, want bridge and the trial's labels", c.what, opts.Driver, opts.Labels)
		}
		gatewayless := opts.Options[noGatewayOption] == "true"
		if opts.Internal != c.closed || gatewayless != c.closed {
			t.Errorf("%s (network %q): Internal %v, %s=%q; want both %v (runner/docker/sidecarnet.go closedNetwork)",
				c.what, c.task.Network, opts.Internal, noGatewayOption, opts.Options[noGatewayOption], c.closed)
		}
		if got := mainEgress(c.task); got != c.egress {
			t.Errorf("%s: the task's container's egress network %v, want %v (runner/docker/sidecarnet.go mainEgress)", c.what, got, c.egress)
		}
	}
}
