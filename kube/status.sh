#!/usr/bin/env bash
# make kube-status: which of the local cluster's processes run, whether the
# node is Ready, and the kubeconfig. Exits 0 only when the cluster is up.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

up=1
for c in "${COMPONENTS[@]}"; do
	if pid_alive "$c"; then
		printf '%-24s running (pid %s)\n' "$c" "$(<"$PIDS/$c.pid")"
	else
		printf '%-24s not running\n' "$c"
		up=0
	fi
done
if ((up)) && [[ $(kctl get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]; then
	echo "up: node $NODE Ready; kubeconfig $KUBECONFIG_ADMIN (state $STATE)"
	exit 0
fi
echo "down (make kube-up starts it; state dir $STATE)"
exit 1
