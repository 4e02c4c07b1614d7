#!/usr/bin/env bash
# kube/smoke.sh: check that the local cluster (make kube-up) does what
# headroom's Kubernetes backend relies on, with a locally built image:
#  - a pod with requests.memory 128Mi / limits.memory 192Mi that touches
#    300 MiB ends Failed, OOMKilled, exit code 137;
#  - a sleeping pod runs; kubectl logs and kubectl exec work;
#  - attach: stdin in, stdout back;
#  - the container reads its own memory cgroup (printed), its limit is the
#    pod's, and a child killed by the OOM killer while PID 1 lives shows in
#    the cgroup's OOM kill counter.
# Exits non-zero on the first failed check; deletes what it made.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

NS=headroom-kube-smoke
IMG=headroom.local/kube-smoke:1
fail() { printf 'smoke: FAIL: %s\n' "$*" >&2; exit 1; }
ok() { printf 'smoke: ok: %s\n' "$*"; }

[[ -s $KUBECONFIG_ADMIN ]] && kctl get node "$NODE" >/dev/null 2>&1 || fail "the local cluster is not up (make kube-up)"

# What kube-up installed from Debian starts nothing at boot: no enabled
# systemd unit, no SysV start link (a second etcd at boot otherwise).
if [[ -s $CACHE/debian-installed ]]; then
	for pkg in $(sort -u "$CACHE/debian-installed"); do
		while read -r f; do
			case $f in
			/lib/systemd/system/*.service | /usr/lib/systemd/system/*.service)
				unit=${f##*/}
				ls /etc/systemd/system/*.wants/"$unit" >/dev/null 2>&1 && fail "$unit (installed with $pkg by kube-up) is enabled: a boot would start it"
				;;
			/etc/init.d/*)
				ls /etc/rc[2-5].d/S*"${f##*/}" >/dev/null 2>&1 && fail "${f##*/} (installed with $pkg by kube-up) has a SysV start link"
				;;
			esac
		done < <(dpkg -L "$pkg" 2>/dev/null)
	done
	ok "nothing kube-up installed from Debian ($(sort -u "$CACHE/debian-installed" | tr '\n' ' ')) starts at boot"
fi

tmp=$(mktemp -d)
cleanup() {
	kctl delete namespace "$NS" --wait=true --timeout=90s >/dev/null 2>&1 || echo "smoke: could not delete namespace $NS" >&2
	docker rmi "$IMG" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

(cd "$KUBE_DIR/build" && CGO_ENABLED=0 go build -trimpath -o "$tmp/smoke" ./smoke)
cp "$KUBE_DIR/build/smoke/Dockerfile" "$tmp/"
docker_build "$IMG" "$tmp"
"$KUBE_DIR/load-image.sh" "$IMG"

kctl create namespace "$NS" >/dev/null 2>&1 || true
pod() { # name memory-request memory-limit stdin args...
	local name=$1 req=$2 lim=$3 stdin=$4
	shift 4
	local args
	args=$(printf '"%s",' "$@")
	cat <<-EOF
		apiVersion: v1
		kind: Pod
		metadata: {name: $name, namespace: $NS, labels: {headroom-kube-smoke: "1"}}
		spec:
		  restartPolicy: Never
		  terminationGracePeriodSeconds: 2
		  containers:
		  - name: main
		    image: $IMG
		    imagePullPolicy: Never
		    args: [${args%,}]
		    stdin: $stdin
		    stdinOnce: $stdin
		    resources:
		      requests: {memory: $req, cpu: 100m}
		      limits: {memory: $lim}
		---
	EOF
}
{
	pod oom 128Mi 192Mi false alloc 300
	pod sleeper 64Mi 256Mi false sleep
	pod echo 16Mi 32Mi true echo
} | kctl apply -f - >/dev/null

# jsonpath_is POD PATH WANT SECONDS: poll until the pod's field equals WANT.
jsonpath_is() {
	local got deadline=$((SECONDS + $4))
	while :; do
		got=$(kctl -n "$NS" get pod "$1" -o "jsonpath=$2" 2>/dev/null || true)
		[[ $got == "$3" ]] && return 0
		((SECONDS < deadline)) || { echo "$1 $2: '$got', want '$3'" >&2; return 1; }
		sleep 0.5
	done
}

jsonpath_is oom '{.status.phase}' Failed 120 || fail "the 300 MiB pod did not end Failed"
term=$(kctl -n "$NS" get pod oom -o 'jsonpath={.status.containerStatuses[0].state.terminated.reason} {.status.containerStatuses[0].state.terminated.exitCode}')
[[ $term == "OOMKilled 137" ]] || fail "the 300 MiB pod (limit 192Mi) ended '$term', want 'OOMKilled 137'"
ok "pod oom (requests 128Mi, limits 192Mi, touches 300 MiB): Failed, $term"

kctl -n "$NS" wait --for=condition=Ready pod/sleeper pod/echo --timeout=120s >/dev/null || fail "pods sleeper/echo not Ready"
ok "pod sleeper Running"

logs=$(kctl -n "$NS" logs sleeper)
[[ $logs == *"sleeping until SIGTERM"* ]] || fail "kubectl logs sleeper: '$logs'"
ok "kubectl logs: $logs"

cg=$(kctl -n "$NS" exec sleeper -- /smoke cgroup) || fail "kubectl exec sleeper -- /smoke cgroup"
echo "smoke: the memory cgroup as the container sees it:"
sed 's/^/    /' <<<"$cg"
grep -Eq '^/sys/fs/cgroup/(memory/memory.limit_in_bytes|memory.max): 268435456$' <<<"$cg" ||
	fail "the container's memory limit is not the pod's 256Mi (268435456)"
ok "kubectl exec works; the container reads its own memory cgroup, limit 268435456"

# A child (an exec'd process) is OOM-killed; PID 1 survives; the counter shows it.
set +e
kctl -n "$NS" exec sleeper -- /smoke alloc 400 >/dev/null 2>&1
code=$?
set -e
[[ $code == 137 ]] || fail "exec of a 400 MiB child in a 256Mi pod exited $code, want 137"
jsonpath_is sleeper '{.status.phase}' Running 5 || fail "the sleeper's PID 1 did not survive its child's OOM kill"
# v1 memory.oom_control and v2 memory.events both say "oom_kill N".
kills=$(kctl -n "$NS" exec sleeper -- /smoke cgroup | grep -oE 'oom_kill [0-9]+' | awk '{print $2; exit}')
[[ ${kills:-0} -ge 1 ]] || fail "no OOM kill counted in the container's cgroup after its child was killed"
ok "a child OOM-killed (exec exit 137) while PID 1 runs; the cgroup counts oom_kill $kills; the pod stays Running"

out=$(printf 'hello\n' | kctl -n "$NS" attach -i echo -c main 2>/dev/null || true)
[[ $out == *"echo: hello"* ]] || fail "kubectl attach -i echo: '$out', want 'echo: hello'"
ok "kubectl attach: stdin in, '$out' back"

echo "smoke: PASS"
