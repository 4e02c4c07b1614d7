#!/usr/bin/env bash
# make kube-scale's cluster side: kwok (sigs.k8s.io/kwok) on the running
# local cluster (make kube-up first), playing N fake nodes: their pods are
# scheduled, marked Running and deleted by kwok, and run nothing. Idempotent.
#   kube/kwok.sh [N]          build (once), start kwok, N fake nodes (default 100) Ready
#   kube/kwok.sh --build-only
#   kube/kwok.sh --down       every pod on a fake node, the fake nodes and kwok gone
# Fake nodes carry the label $KWOK_LABEL and the taint $KWOK_TAINT: no pod
# is scheduled there unless it tolerates the taint (the scale test's
# namespace adds the toleration and a node selector to its pods through
# the PodTolerationRestriction and PodNodeSelector admission plugins), so
# other tests' pods never land on them. Their addresses are loopback ones:
# nothing is ever sent to a fake node or pod.
set -euo pipefail
source "$(dirname "$0")/up.sh"

fake_nodes() { # N
	local i
	for ((i = 0; i < $1; i++)); do
		cat <<-EOF
			apiVersion: v1
			kind: Node
			metadata:
			  name: kwok-node-$i
			  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
			  labels: {${KWOK_LABEL%%=*}: ${KWOK_LABEL#*=}, kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, headroom-kube: kwok}
			spec:
			  taints: [{key: ${KWOK_TAINT%%=*}, value: $(t=${KWOK_TAINT#*=}; echo "${t%%:*}"), effect: ${KWOK_TAINT##*:}}]
			status:
			  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
			  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
			---
		EOF
	done
}

ready_count() {
	kctl get nodes -l "$KWOK_LABEL" -o 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True
}

enough_ready() { (($(ready_count) >= KWOK_N)); }

kwok_down() {
	local nodes
	nodes=$(kctl get nodes -l "$KWOK_LABEL" -o name 2>/dev/null || true)
	if [[ -n $nodes ]]; then
		# Their pods first (a force deletion needs no kubelet to answer),
		# then the nodes: one listing of every pod's node, not a kubectl
		# per node (100 of them took minutes on a loaded machine).
		local ns pod node names
		names=" $(echo ${nodes//node\//}) "
		kctl get pods -A -o 'jsonpath={range .items[*]}{.metadata.namespace} {.metadata.name} {.spec.nodeName}{"\n"}{end}' 2>/dev/null |
			while read -r ns pod node; do
				[[ -n $node && $names == *" $node "* ]] && echo "$ns $pod"
			done | while read -r ns pod; do
				kctl -n "$ns" delete pod "$pod" --force --grace-period=0 >/dev/null 2>&1 || true
			done || true
		kctl delete nodes -l "$KWOK_LABEL" --wait=true --timeout=120s >/dev/null || true
		log "fake nodes removed"
	fi
	# The scale test's namespace (its pods pinned to the fake nodes).
	kctl delete namespace headroom-kwok --ignore-not-found --wait=false >/dev/null 2>&1 || true
	stop_addon kwok
}

kwok_main() {
	local t0=$SECONDS n=${1:-100}
	case $n in
	--build-only)
		build_tool "$KWOK_BIN" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
		return
		;;
	--down)
		pid_alive kube-apiserver && kwok_down
		return
		;;
	esac
	[[ $n =~ ^[0-9]+$ ]] || die "usage: kube/kwok.sh [NODES] | --down | --build-only"
	pid_alive kube-apiserver || die "the cluster is not up (make kube-up first)"
	build_tool "$KWOK_BIN" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	# The default stages: a node Ready with a lease heartbeat, a pod Running
	# at once, deleted when asked. Pod addresses from a loopback range.
	PATH=$(dirname "$KWOK_BIN"):$PATH start kwok kwok --kubeconfig "$KUBECONFIG_ADMIN" \
		--manage-all-nodes=false --manage-nodes-with-label-selector "$KWOK_LABEL" \
		--node-ip 127.0.0.1 --cidr 127.16.0.1/16 --node-lease-duration-seconds 40
	fake_nodes "$n" | kctl apply -f - >/dev/null
	KWOK_N=$n wait_for kwok 180 "$n fake nodes Ready" enough_ready
	log "kwok up in $((SECONDS - t0)) s: $n fake nodes Ready (label $KWOK_LABEL, taint $KWOK_TAINT; log $LOGS/kwok.log)"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then kwok_main "$@"; fi
