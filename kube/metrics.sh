#!/usr/bin/env bash
# make kube-metrics: metrics-server on the running local cluster (make
# kube-up first), so that the metrics API (metrics.k8s.io) answers: what
# headroom reads a pod's memory from with --pod-probe off. Idempotent.
#   kube/metrics.sh          build (once), start, wait until pods' metrics are served
#   kube/metrics.sh --build-only
#   kube/metrics.sh --down   stop it and remove its APIService (the cluster as before)
# It runs as a process on this machine beside the others (not as a pod: a
# pod here cannot reach the API server, which listens on 127.0.0.1 only),
# serving on the node's address, which the API server's aggregation layer
# reaches through a selector-less Service and its Endpoints. It scrapes the
# real node only (fake kwok nodes, make kube-scale, are left out).
set -euo pipefail
source "$(dirname "$0")/up.sh"

APISERVICE=v1beta1.metrics.k8s.io

# aggregation_on: the running API server has the front proxy's flags
# (an apiserver started by an older kube/up.sh has not).
aggregation_on() {
	local pid
	pid_alive kube-apiserver || return 1
	pid=$(<"$PIDS/kube-apiserver.pid")
	tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qx -- --requestheader-client-ca-file
}

metrics_manifest() { # node-ip
	cat <<-EOF
		apiVersion: rbac.authorization.k8s.io/v1
		kind: ClusterRole
		metadata:
		  name: system:metrics-server
		  labels: {headroom-kube: metrics}
		rules:
		- apiGroups: [""]
		  resources: [nodes/metrics]
		  verbs: [get]
		- apiGroups: [""]
		  resources: [pods, nodes]
		  verbs: [get, list, watch]
		---
		apiVersion: rbac.authorization.k8s.io/v1
		kind: ClusterRoleBinding
		metadata:
		  name: system:metrics-server
		  labels: {headroom-kube: metrics}
		roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:metrics-server}
		subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
		---
		apiVersion: rbac.authorization.k8s.io/v1
		kind: ClusterRoleBinding
		metadata:
		  name: metrics-server:system:auth-delegator
		  labels: {headroom-kube: metrics}
		roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
		subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
		---
		apiVersion: rbac.authorization.k8s.io/v1
		kind: RoleBinding
		metadata:
		  name: metrics-server-auth-reader
		  namespace: kube-system
		  labels: {headroom-kube: metrics}
		roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
		subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
		---
		apiVersion: v1
		kind: Service
		metadata:
		  name: metrics-server
		  namespace: kube-system
		  labels: {headroom-kube: metrics}
		spec:
		  ports: [{name: https, port: 443, targetPort: $METRICS_SERVER_PORT}]
		---
		apiVersion: v1
		kind: Endpoints
		metadata:
		  name: metrics-server
		  namespace: kube-system
		  labels: {headroom-kube: metrics}
		subsets:
		- addresses: [{ip: "$1"}]
		  ports: [{name: https, port: $METRICS_SERVER_PORT}]
		---
		apiVersion: apiregistration.k8s.io/v1
		kind: APIService
		metadata:
		  name: $APISERVICE
		  labels: {headroom-kube: metrics}
		spec:
		  group: metrics.k8s.io
		  version: v1beta1
		  service: {name: metrics-server, namespace: kube-system, port: 443}
		  caBundle: $(base64 -w0 "$PKI/ca.crt")
		  groupPriorityMinimum: 100
		  versionPriority: 100
	EOF
}

# served: the metrics API answers with the real node's figures.
served() {
	kctl get --raw "/apis/metrics.k8s.io/v1beta1/nodes/$NODE" | grep -q '"memory"'
}

metrics_down() {
	kctl delete apiservice "$APISERVICE" --ignore-not-found >/dev/null 2>&1 || true
	kctl delete -n kube-system service,endpoints metrics-server --ignore-not-found >/dev/null 2>&1 || true
	kctl delete clusterrolebinding,clusterrole,rolebinding -A -l headroom-kube=metrics --ignore-not-found >/dev/null 2>&1 || true
	stop_addon metrics-server
}

metrics_main() {
	local t0=$SECONDS ip
	case ${1:-} in
	--build-only)
		build_tool "$METRICS_SERVER_BIN" "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION"
		return
		;;
	--down)
		pid_alive kube-apiserver && metrics_down
		return
		;;
	esac
	pid_alive kube-apiserver || die "the cluster is not up (make kube-up first)"
	build_tool "$METRICS_SERVER_BIN" "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION"
	if ! aggregation_on; then
		# Started by an older kube/up.sh: the API server alone is started
		# again, with the aggregation flags (the rest keeps running).
		log "the API server runs without the aggregation layer: restarting it with it"
		stop_addon kube-apiserver
		"$KUBE_DIR/up.sh" >/dev/null
	fi
	ip=$(host_ip)
	gen_cert metrics-server "/CN=system:metrics-server" clientAuth
	gen_cert metrics-server-serving "/CN=metrics-server.kube-system.svc" serverAuth \
		"DNS:metrics-server.kube-system.svc,IP:$ip,IP:127.0.0.1"
	write_kubeconfig "$STATE/metrics-server.kubeconfig" metrics-server system:metrics-server
	# An APIService whose server does not answer makes the API's discovery
	# partial (kubectl warns, a namespace cannot be deleted): a start that
	# fails takes it away again.
	trap 'status=$?; if ((status)); then log "metrics-server did not come up: removing its APIService"; metrics_down; fi' EXIT
	metrics_manifest "$ip" | kctl apply -f - >/dev/null
	# 10 s, the least metrics-server takes: a pod's first figures are
	# there about two scrapes after it starts.
	PATH=$(dirname "$METRICS_SERVER_BIN"):$PATH start metrics-server metrics-server \
		--kubeconfig "$STATE/metrics-server.kubeconfig" \
		--authentication-kubeconfig "$STATE/metrics-server.kubeconfig" --authorization-kubeconfig "$STATE/metrics-server.kubeconfig" \
		--bind-address "$ip" --secure-port "$METRICS_SERVER_PORT" \
		--tls-cert-file "$PKI/metrics-server-serving.crt" --tls-private-key-file "$PKI/metrics-server-serving.key" \
		--kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
		--node-selector "${KWOK_LABEL%%=*}!=${KWOK_LABEL#*=}" \
		--metric-resolution 10s --kubelet-request-timeout 5s --profiling=false
	wait_for metrics-server 120 "the metrics API (metrics.k8s.io) serving node $NODE" served
	log "metrics-server up in $((SECONDS - t0)) s: kubectl top pods works (log $LOGS/metrics-server.log)"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then metrics_main "$@"; fi
