package docker

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A task with no network (allow_internet = false, a Harbor task's
// "none"; a headroom task's trial-only beside its services) gets a trial
// network with no way out and no gateway on the host, for its sidecars as
// much as for its container: before, only trial-only was internal, and an
// internal bridge still carried the host's gateway address.
func TestTrialNetworkLeadsNowhereWithoutANetwork(t *testing.T) {
	public := &model.NetworkPolicy{Mode: model.NetworkPublic}
	for _, c := range []struct {
		what   string
		task   model.Task
		closed bool
	}{
		{"harbor allow_internet = false with services", model.Task{Network: "none", Sidecars: []model.Sidecar{{Name: "fetcher"}}}, true},
		{"headroom [[services]] with no network", model.Task{Network: model.NetworkTrialOnly, Sidecars: []model.Sidecar{{Name: "db"}}}, true},
		{"no network, only named volumes", model.Task{Network: "none", Volumes: []model.VolumeMount{{Volume: "data", Target: "/data"}}}, true},
		{"a network of its own", model.Task{Network: "bridge", Sidecars: []model.Sidecar{{Name: "db"}}}, false},
		{"no network but the agent's phase asks for one", model.Task{Network: "none", AgentNetwork: public, Sidecars: []model.Sidecar{{Name: "db"}}}, false},
	} {
		opts := trialNetworkOptions(c.task, map[string]string{"headroom": "1"})
		if opts.Labels["headroom"] != "1" || opts.Driver != "bridge" {
			t.Errorf("%s: driver %q labels %v, want bridge and the trial's labels", c.what, opts.Driver, opts.Labels)
		}
		gatewayless := opts.Options[noGatewayOption] == "true"
		if opts.Internal != c.closed || gatewayless != c.closed {
			t.Errorf("%s (network %q): Internal %v, %s=%q; want both %v (sidecars/sidecarnet.go trialNetworkOptions)",
				c.what, c.task.Network, opts.Internal, noGatewayOption, opts.Options[noGatewayOption], c.closed)
		}
	}
}
