#!/usr/bin/env bash
# kube/load-image.sh IMAGE...: copy local Docker images into the local
# cluster's containerd (namespace k8s.io), where pods with
# imagePullPolicy Never or IfNotPresent find them. Nothing is pulled.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

(($#)) || die "usage: kube/load-image.sh IMAGE..."
pid_alive containerd || die "the local cluster is not up (make kube-up)"
for img in "$@"; do
	docker image inspect "$img" >/dev/null 2>&1 || die "no Docker image $img (build it first; nothing can be pulled here)"
	docker save "$img" | kctr images import - >/dev/null
	log "loaded $img"
done
