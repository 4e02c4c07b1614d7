package docker

import (
	"github.com/docker/docker/api/types/network"
	"github.com/headroom-eval/headroom/model"
)

// noGatewayOption keeps the host's address off a bridge: the engine
// gives a network's bridge its gateway address on the host (even an
// internal network's, where it only drops what would be forwarded), and a
// container on it reached every host server listening there or on every
// address. With it the bridge has no address: nothing on the network
// reaches the host.
const noGatewayOption = "com.docker.network.bridge.inhibit_ipv4"

// trialNetworkOptions is how a trial's network is made. A task with no
// network of its own (none, or trial-only beside its services) and no
// phase that asks for one gets a network that leads nowhere: internal (no
// route out) and with no gateway on the host. The task's services are its
// code too: allow_internet = false is theirs as much as its container's,
// and a sidecar that fetched into a shared volume gave the task what its
// container could not fetch itself.
func trialNetworkOptions(task model.Task, labels map[string]string) network.CreateOptions {
	opts := network.CreateOptions{Driver: "bridge", Labels: labels}
	if closedNetwork(task) {
		opts.Internal = true
		opts.Options = map[string]string{noGatewayOption: "true"}
	}
	return opts
}

// closedNetwork says whether a task's trial network leads nowhere.
func closedNetwork(task model.Task) bool {
	switch task.Network {
	case model.NetworkTrialOnly:
		return true
	case "none":
		return !task.PhaseWantsNetwork()
	}
	return false
}
