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

// trialNetworkOptions is how a trial's network is made: closed
// (closedNetwork) it is internal (no route out) and has no gateway on the
// host.
func trialNetworkOptions(task model.Task, labels map[string]string) network.CreateOptions {
	opts := network.CreateOptions{Driver: "bridge", Labels: labels}
	if closedNetwork(task) {
		opts.Internal = true
		opts.Options = map[string]string{noGatewayOption: "true"}
	}
	return opts
}

// closedNetwork says whether a task's trial network leads nowhere: the
// task has no network of its own (none, or trial-only beside its
// services) and no phase asks for one, or it has services and its
// container's network is not open (none with a phase's network, an
// allowlist). The task's services are its code too: allow_internet =
// false and allowed_hosts are theirs as much as its container's, and a
// service that fetched into a shared volume gave the task what its
// container could not fetch itself. A service has no network out then:
// an allowlist is its container's, let out through an egress network of
// its own (mainEgress) where the allowlist is enforced.
func closedNetwork(task model.Task) bool {
	switch {
	case task.Network == model.NetworkTrialOnly:
		return true
	case task.Network == "none" && !task.PhaseWantsNetwork():
		return true
	}
	return len(task.Sidecars) > 0 && task.BaselinePolicy().Mode != model.NetworkPublic
}

// mainEgress says whether the task's container, on a closed trial
// network, joins a second network of the trial's own to reach out (its
// allowlist's hosts, a phase's network): one its services are not on.
func mainEgress(task model.Task) bool {
	if !closedNetwork(task) || task.Network == model.NetworkTrialOnly {
		return false
	}
	return task.Network != "none" || task.PhaseWantsNetwork()
}
