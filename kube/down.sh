#!/usr/bin/env bash
# make kube-down: stop what kube/up.sh started, by the PIDs it recorded, and
# remove what the cluster made: its pods and their processes, mounts, bridge,
# NAT rules and cgroups, the host sysctls the kubelet changed, and the state
# dir. Docker's own containerd and dockerd are not touched. Idempotent.
# The built binaries ($HEADROOM_KUBE_CACHE) are kept.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || die "needs root"

stop() { stop_addon "$@"; }

# The processes of the cluster's pods: every PID in the kubelet's cgroups.
pod_pids() {
	find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

# The shims of the cluster's containerd (its socket is on their command line).
shim_pids() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(tr '\0' ' ' 2>/dev/null <"$p/cmdline") == *containerd-shim*" -address $SOCK "* ]] && echo "${p#/proc/}"
	done
}

[[ -d $STATE ]] || { log "nothing to stop ($STATE does not exist)"; exit 0; }

# 1. Pods, through the kubelet while it runs (so their networks are torn down too).
if pid_alive kube-apiserver && pid_alive kubelet; then
	kctl delete pods --all --all-namespaces --grace-period=2 --wait=true --timeout=60s >/dev/null 2>&1 ||
		log "some pods were not deleted through the API; their processes are killed below"
fi

# 1b. The add-ons (kube/metrics.sh, kube/kwok.sh), before the API server they use.
for c in "${ADDONS[@]}"; do stop "$c"; done

# 2. The control plane and the kubelet.
for c in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c"; done

# 3. Whatever containers are left in the cluster's containerd, then containerd itself.
if pid_alive containerd; then
	for t in $(kctr tasks ls -q 2>/dev/null); do kctr tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
	for t in $(kctr tasks ls -q 2>/dev/null); do kctr tasks delete -f "$t" >/dev/null 2>&1; done
fi
stop containerd
for pid in $(pod_pids) $(shim_pids); do kill -KILL "$pid" 2>/dev/null && log "killed leftover pid $pid"; done
for _ in $(seq 50); do [[ -z $(pod_pids)$(shim_pids) ]] && break; sleep 0.2; done

# 4. Mounts under the state dir (overlay rootfs, netns, kubelet volumes), deepest first.
awk -v s="$STATE/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
	umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
done

# 5. The pod network: the bridge and any NAT rule the bridge plugin left (comment names the network).
ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE" && log "bridge $BRIDGE removed"
if command -v iptables >/dev/null; then
	while n=$(iptables -t nat -L POSTROUTING -n --line-numbers 2>/dev/null | awk '/"headroom-kube"/ {print $1; exit}') && [[ -n $n ]]; do
		iptables -t nat -D POSTROUTING "$n"
	done
	for ch in $(iptables -t nat -S 2>/dev/null | awk '$1 == "-A" && $2 ~ /^CNI-/ && /"headroom-kube"/ {print $2}' | sort -u); do
		iptables -t nat -F "$ch" && iptables -t nat -X "$ch"
	done
fi

# 5b. The kubelet's own chains (a cluster an older kube-up started made
# them; up.sh's kubelet makes none), unless the machine had them before it.
drop_chain() { # CMD TABLE CHAIN
	local cmd=$1 table=$2 chain=$3 from
	"$cmd" -t "$table" -S "$chain" >/dev/null 2>&1 || return 0
	for from in INPUT OUTPUT FORWARD PREROUTING POSTROUTING; do
		while "$cmd" -t "$table" -D "$from" -j "$chain" 2>/dev/null; do :; done
	done
	"$cmd" -t "$table" -F "$chain" && "$cmd" -t "$table" -X "$chain" && log "$cmd: chain $chain ($table) removed"
}
if [[ -f $STATE/chains.before ]] || ! pgrep -x kubelet >/dev/null; then
	for tc in "${KUBELET_CHAINS[@]}"; do
		table=${tc%%:*} chain=${tc#*:}
		grep -qx "v4 $chain" "$STATE/chains.before" 2>/dev/null || { command -v iptables >/dev/null && drop_chain iptables "$table" "$chain"; }
		grep -qx "v6 $chain" "$STATE/chains.before" 2>/dev/null || { command -v ip6tables >/dev/null && drop_chain ip6tables "$table" "$chain"; }
	done
fi

# 6. The kubelet's cgroups (empty now), deepest first.
find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} \; 2>/dev/null

# 7. The host sysctls the kubelet rewrote.
if [[ -f $STATE/sysctls.saved ]]; then
	while read -r key value; do
		[[ $(</proc/sys/$key) == "$value" ]] || { echo "$value" >"/proc/sys/$key" && log "sysctl ${key//\//.} = $value again"; }
	done <"$STATE/sysctls.saved"
fi

# 7b. What the kubelet and containerd made outside the state dir where the
# machine had nothing (dirs.before): the kubelet's links to this cluster's
# pod logs, libcni's cached results of its network, the kubelet's
# device-plugin socket, then the directories if nothing else is in them.
if [[ -f $STATE/dirs.before ]]; then
	for d in "${HOST_DIRS[@]}"; do
		grep -qx "$d" "$STATE/dirs.before" && continue
		[[ -d $d ]] || continue
		find "$d" -type l -lname "$STATE/*" -delete 2>/dev/null
		find "$d" -type f -name 'headroom-kube-*' -delete 2>/dev/null
		# The kubelet's device-plugin registration socket: it makes it at
		# a fixed path (/var/lib/kubelet/device-plugins/kubelet.sock),
		# whatever its root dir, and leaves it when it stops.
		find "$d" -type s -name 'kubelet.sock' -delete 2>/dev/null
		find "$d" -depth -type d -empty -delete 2>/dev/null
		[[ -d $d ]] && log "left $d: it holds what this cluster did not make" || log "$d removed"
	done
fi

# 8. The state dir, unless something is still mounted in it.
if awk -v s="$STATE/" 'index($5, s) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
	die "mounts remain under $STATE; not removing it"
fi
rm -rf "$STATE"
log "down: $STATE removed (binaries kept in $BIN)"
