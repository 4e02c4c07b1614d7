# Shared by kube/*.sh (sourced): where the local cluster's binaries, state
# and sockets live. Nothing here belongs to Docker's own containerd.
KUBE_VERSION=v1.34.4
KUBE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${HEADROOM_KUBE_CACHE:-$HOME/.cache/headroom/kube}
BIN=$CACHE/bin-$KUBE_VERSION
STATE=${HEADROOM_KUBE_STATE:-/tmp/headroom-kube}
PKI=$STATE/pki
PIDS=$STATE/pids
LOGS=$STATE/logs
SOCK=$STATE/containerd.sock
KUBECONFIG_ADMIN=$STATE/kubeconfig
NODE=headroom-node
ETCD_PORT=${HEADROOM_KUBE_ETCD_PORT:-12379}
API_PORT=${HEADROOM_KUBE_API_PORT:-6443}
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/24
BRIDGE=hrkube0
PAUSE_IMAGE=headroom.local/kube-pause:1
# The cluster's etcd: built from kube/build/etcd at the version Kubernetes
# v1.34.4 pins (its go.mod), not Debian bookworm's 3.4.23, on which the API
# server turns watch progress requests off (kube/build/etcd/main.go).
ETCD_VERSION=v3.6.4
ETCD_BIN=$CACHE/etcd-$ETCD_VERSION/etcd
# Optional add-ons (make kube-metrics, make kube-scale), each built once
# from the Go module proxy into the cache beside the Kubernetes binaries.
# Both built against k8s.io v0.33 libraries: one minor below the cluster,
# inside client-go's supported skew.
METRICS_SERVER_VERSION=v0.8.0
METRICS_SERVER_BIN=$CACHE/metrics-server-$METRICS_SERVER_VERSION/metrics-server
METRICS_SERVER_PORT=${HEADROOM_KUBE_METRICS_PORT:-4443}
KWOK_VERSION=v0.7.0
KWOK_BIN=$CACHE/kwok-$KWOK_VERSION/kwok
# Fake (kwok) nodes carry this label and taint: nothing but a pod that
# tolerates it is scheduled there (make kube-scale's namespace does).
KWOK_LABEL=type=kwok
KWOK_TAINT=kwok.x-k8s.io/node=fake:NoSchedule
# The components, in the order up.sh starts them; down.sh stops them in reverse.
COMPONENTS=(etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet)
# The add-ons' processes, started by kube/metrics.sh and kube/kwok.sh when
# asked for; down.sh stops them first.
ADDONS=(metrics-server kwok)
# The host sysctls the kubelet v1.34 wants (setupKernelTunables in
# pkg/kubelet/cm/container_manager_linux.go), as key=value. It may not set
# them itself (protectKernelDefaults: true: it refuses to start instead);
# up.sh sets those that differ only with the user's consent
# (HEADROOM_KUBE_SYSCTLS=set), saving the old values, and down.sh puts them back.
KUBELET_SYSCTLS=(vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000)
# Directories outside the state dir that the kubelet and containerd make
# where they are missing (the kubelet's container log links, libcni's
# result cache, the kubelet's default certificate dir): up.sh records which
# the machine had, down.sh removes what it did not (its own links and
# cache files, then the directories if empty).
HOST_DIRS=(/var/log/containers /var/lib/cni /var/lib/kubelet /var/log/pods /etc/kubernetes)
# The iptables chains a kubelet makes (makeIPTablesUtilChains, which up.sh
# turns off; a cluster an older kube-up started has them), as table:chain.
KUBELET_CHAINS=(filter:KUBE-FIREWALL mangle:KUBE-IPTABLES-HINT mangle:KUBE-KUBELET-CANARY nat:KUBE-KUBELET-CANARY filter:KUBE-KUBELET-CANARY)

export PATH="$BIN:$PATH:/usr/local/go/bin:/usr/sbin:/sbin"

log() { printf 'kube: %s\n' "$*" >&2; }
die() { printf 'kube: error: %s\n' "$*" >&2; exit 1; }

# pid_alive NAME: the recorded process of NAME runs (and is still that program).
pid_alive() {
	local f=$PIDS/$1.pid pid
	[[ -f $f ]] || return 1
	pid=$(<"$f")
	[[ -n $pid && -d /proc/$pid ]] || return 1
	# A reused PID runs another program: compare with the recorded executable.
	[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(cat "$PIDS/$1.exe" 2>/dev/null)" ]]
}

# stop_addon NAME [SECONDS]: SIGTERM the recorded process of NAME (any
# component), SIGKILL it after SECONDS.
stop_addon() {
	local name=$1 secs=${2:-20} pid deadline
	if pid_alive "$name"; then
		pid=$(<"$PIDS/$name.pid")
		kill -TERM "$pid" 2>/dev/null
		deadline=$((SECONDS + secs))
		while [[ -d /proc/$pid ]] && ((SECONDS < deadline)); do sleep 0.2; done
		if [[ -d /proc/$pid ]]; then
			log "$name (pid $pid) ignored SIGTERM for ${secs}s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null
		fi
		log "$name (pid $pid) stopped"
	fi
	rm -f "$PIDS/$name.pid" "$PIDS/$name.exe"
}

# docker_build TAG DIR: a quiet `docker build` (its output only on failure).
docker_build() {
	local out
	out=$(docker build -q --label headroom-kube=1 -t "$1" "$2" 2>&1) || { echo "$out" >&2; die "docker build $1 failed"; }
}

# build_tool BINARY PACKAGE@VERSION: go install one program, as its own
# module's go.mod pins it, into BINARY's directory (once per machine).
build_tool() {
	local bin=$1 pkg=$2 dir start=$SECONDS
	[[ -x $bin ]] && return 0
	command -v go >/dev/null || die "needs go to build $pkg (PATH: $PATH)"
	dir=$(dirname "$bin")
	log "building $pkg into $dir (once per machine)"
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	(cd / && CGO_ENABLED=0 GOBIN="$dir.tmp" nice -n 10 go install -trimpath -ldflags='-s -w' "$pkg") \
		2> >(grep -v '^go: downloading' >&2) || die "building $pkg failed"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	log "built $(basename "$bin") in $((SECONDS - start)) s"
}

kctl() { kubectl --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
kctr() { ctr --address "$SOCK" -n k8s.io "$@"; }

# host_ip: the address of the interface of the default route (the node's InternalIP).
host_ip() {
	local ip
	ip=$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="src") {print $(i+1); exit}}')
	[[ -n $ip ]] || ip=$(hostname -I 2>/dev/null | awk '{print $1}')
	[[ -n $ip ]] || die "no IPv4 address for the node (no default route?)"
	echo "$ip"
}
