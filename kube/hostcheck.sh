#!/usr/bin/env bash
# make kube-hostcheck: the local cluster leaves the machine as it found it.
# With the cluster down: records iptables-save, ip6tables-save, the kernel
# settings the kubelet wants and the directories under /var/lib, /var/log,
# /etc, /opt and /run; checks that kube-up without consent refuses where
# the machine's settings differ, changing nothing; then kube-up with
# consent (HEADROOM_KUBE_SYSCTLS=set), checks that the kubelet made no
# iptables chain while up, kube-down, and diffs everything against the
# record. Exit 0 only when nothing differs. Rules of Docker's own networks
# (chains and bridges named DOCKER*, docker0, br-*), which other users of
# the engine change meanwhile, are left out of the diff.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || die "needs root"
[[ -d $STATE ]] && die "the cluster is up (or $STATE is left): make kube-down first"
out=$(mktemp -d /tmp/headroom-kube-hostcheck.XXXXXX)
trap 'rm -rf "$out"' EXIT

snapshot() { # DIR
	mkdir -p "$1"
	local save
	for save in iptables-save ip6tables-save; do
		"$save" 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//' |
			grep -Ev 'DOCKER|docker0|br-[0-9a-f]{12}|veth' >"$1/$save"
	done
	local kv
	for kv in "${KUBELET_SYSCTLS[@]}" net/ipv4/ip_forward=; do
		echo "${kv%%=*} $(<"/proc/sys/${kv%%=*}")"
	done >"$1/sysctls"
	{
		find /var/lib /var/log /etc /opt -maxdepth 2 -type d 2>/dev/null | grep -Ev '^/var/lib/docker|^/var/lib/containerd|^/var/log/journal'
		find /run -maxdepth 1 -type d 2>/dev/null | grep -Ev '^/run/docker|^/run/user'
	} | sort >"$1/dirs"
}

differs() { # A B: the diff, said; 0 when something differs
	local f bad=1
	for f in iptables-save ip6tables-save sysctls dirs; do
		if ! diff -u "$1/$f" "$2/$f" >"$out/$f.diff"; then
			log "$f differs:"
			cat "$out/$f.diff" >&2
			bad=0
		fi
	done
	return $bad
}

fail=0
snapshot "$out/before"

# 1. Without consent, where the settings differ: refused, nothing changed.
need=0
for kv in "${KUBELET_SYSCTLS[@]}"; do
	[[ $(<"/proc/sys/${kv%%=*}") == "${kv#*=}" ]] || need=1
done
if ((need)); then
	if HEADROOM_KUBE_SYSCTLS= "$KUBE_DIR/up.sh" >"$out/refused.log" 2>&1; then
		log "FAIL: kube-up started without consent on a machine whose kernel settings the kubelet needs changed"
		fail=1
		"$KUBE_DIR/down.sh" >/dev/null 2>&1
	elif ! grep -q 'KUBE_SYSCTLS=set' "$out/refused.log"; then
		log "FAIL: kube-up failed without saying how to consent:"
		cat "$out/refused.log" >&2
		fail=1
	else
		log "ok: refused without consent: $(tail -1 "$out/refused.log")"
	fi
	snapshot "$out/refused"
	if differs "$out/before" "$out/refused"; then
		log "FAIL: a refused kube-up changed the machine"
		fail=1
	fi
fi

# 2. With consent: up, no kubelet chain while up, down, nothing left.
HEADROOM_KUBE_SYSCTLS=set "$KUBE_DIR/up.sh" >"$out/up.log" 2>&1 || { cat "$out/up.log" >&2; die "kube-up failed"; }
for save in iptables-save ip6tables-save; do
	if chains=$("$save" 2>/dev/null | grep -oE '^:KUBE-[A-Z0-9-]+' | tr '\n' ' ') && [[ -n $chains ]]; then
		log "FAIL: while up, $save has the kubelet's chains: $chains"
		fail=1
	fi
done
"$KUBE_DIR/down.sh" >"$out/down.log" 2>&1 || { cat "$out/down.log" >&2; log "FAIL: kube-down failed"; fail=1; }
snapshot "$out/after"
if differs "$out/before" "$out/after"; then
	log "FAIL: the machine after kube-up and kube-down is not as it was; kube-down said:"
	cat "$out/down.log" >&2
	fail=1
fi
((fail)) && exit 1
log "ok: iptables, ip6tables, the kernel settings and the directories are as they were"
