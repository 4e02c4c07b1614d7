#!/usr/bin/env bash
# make kube-up: a real single-node Kubernetes (v1.34.4) on this machine, for
# headroom's Kubernetes backend tests. Idempotent: what already runs is left
# running. See kube/README.md and ../docs (KUBERNETES facts) for why each
# setting is what it is. Needs root, Docker (for the pause image), the Go
# module proxy and the Debian mirror; pulls nothing from a registry.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || die "needs root (it starts a kubelet and a containerd)"
command -v docker >/dev/null || die "needs docker (the pause image and pod images come from it)"

# 1. Debian packages, only those missing.
install_missing() {
	local missing=()
	[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || missing+=(containernetworking-plugins)
	command -v containerd >/dev/null && command -v ctr >/dev/null || missing+=(containerd)
	command -v runc >/dev/null || missing+=(runc)
	command -v openssl >/dev/null || missing+=(openssl)
	command -v iptables >/dev/null || missing+=(iptables)
	command -v curl >/dev/null || missing+=(curl)
	((${#missing[@]})) || { quiet_services; return 0; }
	log "installing from Debian: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# Debian's packages start their own services on install (etcd.service
	# would be a second etcd on 2379, now and at every boot): a
	# policy-rc.d that refuses every start keeps them stopped, and what
	# they enabled is disabled after (quiet_services). One already there
	# is the host's own, left as it is.
	local policy=/usr/sbin/policy-rc.d ours=0
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\n# made by headroom kube/up.sh while it installs; removed after\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		ours=1
	fi
	apt-get install -y -q --no-install-recommends "${missing[@]}" || { ((ours)) && rm -f "$policy"; return 1; }
	((ours)) && rm -f "$policy"
	mkdir -p "$CACHE"
	printf '%s\n' "${missing[@]}" >>"$CACHE/debian-installed"
	quiet_services
}

# quiet_services disables (and stops) the services of every package this
# script installed (recorded in $CACHE/debian-installed): systemd units and
# SysV scripts alike, whether or not systemd is PID 1 here. The cluster runs
# its own etcd and containerd; a boot must not start Debian's.
quiet_services() {
	[[ -s $CACHE/debian-installed ]] || return 0
	local pkg f unit
	for pkg in $(sort -u "$CACHE/debian-installed"); do
		while read -r f; do
			case $f in
			/lib/systemd/system/*.service | /usr/lib/systemd/system/*.service)
				unit=${f##*/}
				[[ $unit == *@.service ]] && continue
				if [[ -d /run/systemd/system ]]; then
					systemctl disable --now "$unit" >/dev/null 2>&1 || true
				else
					systemctl disable "$unit" >/dev/null 2>&1 || true
				fi
				# Where systemctl cannot (no systemd at all), the links.
				rm -f /etc/systemd/system/*.wants/"$unit"
				;;
			/etc/init.d/*)
				[[ -x $f ]] || continue
				# Disabled, not stopped: its stop could match the cluster's
				# own etcd by executable; policy-rc.d kept it from starting.
				command -v update-rc.d >/dev/null && update-rc.d "${f##*/}" disable >/dev/null 2>&1 || true
				;;
			esac
		done < <(dpkg -L "$pkg" 2>/dev/null)
	done
}

# 2. The Kubernetes binaries, built once per machine into $BIN.
build_binaries() {
	local b missing=0
	for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
		[[ -x $BIN/$b ]] || missing=1
	done
	if ((missing == 0)); then
		log "binaries: $BIN (cached)"
		return
	fi
	command -v go >/dev/null || die "needs go to build the Kubernetes binaries (PATH: $PATH)"
	log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl $KUBE_VERSION into $BIN (once per machine; 10-50 min on 2 cores, by load)"
	local start=$SECONDS
	rm -rf "$BIN.tmp"
	mkdir -p "$BIN.tmp"
	# The version the binaries report (node info, /version) is stamped as
	# Kubernetes' own build does (hack/lib/version.sh); a module build has none.
	local v ldflags='-s -w' minor=${KUBE_VERSION#v1.}
	for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=${minor%%.*} -X $v.gitTreeState=clean"
	done
	(cd "$KUBE_DIR/build" && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags="$ldflags" -o "$BIN.tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl) \
		2> >(grep -v '^go: downloading' >&2)
	rm -rf "$BIN"
	mv "$BIN.tmp" "$BIN"
	log "built in $((SECONDS - start)) s"
}

# The cluster's etcd, built once per machine into its own directory of the
# cache from kube/build/etcd (its version pinned through kube/build's
# go.mod, ETCD_VERSION checked against the binary). Beside the Kubernetes
# binaries' build it compiles etcd's server, raft and bbolt only: the rest
# (grpc, the etcd client, protobuf) is theirs, at the same versions.
build_etcd() {
	local dir start=$SECONDS got
	[[ -x $ETCD_BIN ]] && return 0
	command -v go >/dev/null || die "needs go to build etcd (PATH: $PATH)"
	dir=$(dirname "$ETCD_BIN")
	log "building etcd $ETCD_VERSION into $dir (once per machine)"
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	(cd "$KUBE_DIR/build" && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags='-s -w' -o "$dir.tmp/etcd" ./etcd) \
		2> >(grep -v '^go: downloading' >&2) || die "building etcd failed"
	got=$("$dir.tmp/etcd" --version | awk '/^etcd Version:/ {print "v" $3}')
	[[ $got == "$ETCD_VERSION" ]] || die "kube/build/go.mod gives etcd $got, kube/lib.sh's ETCD_VERSION is $ETCD_VERSION: make them agree"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	log "built etcd in $((SECONDS - start)) s"
}

# The sandbox ("pause") image: a static Go program FROM scratch, built with
# Docker and imported into the cluster's containerd (no registry to pull from).
build_pause() {
	local dir=$CACHE/pause
	if [[ ! -x $dir/pause || $KUBE_DIR/build/pause/main.go -nt $dir/pause ]]; then
		mkdir -p "$dir"
		(cd "$KUBE_DIR/build" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$dir/pause" ./pause)
	fi
	cp "$KUBE_DIR/build/pause/Dockerfile" "$dir/Dockerfile"
	docker_build "$PAUSE_IMAGE" "$dir"
}

# 3. Certificates: a CA and one key pair per component, made once per state dir.
gen_cert() { # name subject extendedKeyUsage [subjectAltName [ca]]
	local name=$1 subj=$2 usage=$3 sans=${4:-} ca=${5:-ca}
	[[ -s $PKI/$name.crt ]] && return
	{
		echo "basicConstraints = CA:FALSE"
		echo "keyUsage = critical, digitalSignature, keyEncipherment"
		echo "extendedKeyUsage = $usage"
		[[ -z $sans ]] || echo "subjectAltName = $sans"
	} >"$PKI/$name.ext"
	openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
	openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -set_serial "0x$(openssl rand -hex 16)" \
		-days 3650 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
	rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

gen_ca() { # name CN
	[[ -s $PKI/$1.crt ]] && return
	openssl genrsa -out "$PKI/$1.key" 2048 2>/dev/null
	openssl req -x509 -new -key "$PKI/$1.key" -subj "/CN=$2" -days 3650 -out "$PKI/$1.crt"
}

make_pki() {
	local ip=$1
	mkdir -p "$PKI"
	chmod 700 "$PKI"
	# The serving certificates name the node's address: made again if it changed.
	if [[ -f $PKI/host-ip && $(<"$PKI/host-ip") != "$ip" ]]; then
		rm -f "$PKI"/apiserver.* "$PKI"/kubelet-serving.*
	fi
	echo "$ip" >"$PKI/host-ip"
	gen_ca ca headroom-kube-ca
	# The aggregation layer's own CA (an API server it proxies to, such as
	# metrics-server, trusts the user the front proxy names): apart from
	# the client CA, as Kubernetes advises.
	gen_ca front-proxy-ca headroom-kube-front-proxy-ca
	gen_cert front-proxy-client "/CN=front-proxy-client" clientAuth "" front-proxy-ca
	gen_cert apiserver "/CN=kube-apiserver" serverAuth \
		"DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$ip,IP:${SERVICE_CIDR%.0/*}.1"
	gen_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
	gen_cert admin "/O=system:masters/CN=kubernetes-admin" clientAuth
	gen_cert kubelet "/O=system:nodes/CN=system:node:$NODE" clientAuth
	gen_cert kubelet-serving "/CN=$NODE" serverAuth "DNS:$NODE,DNS:localhost,IP:127.0.0.1,IP:$ip"
	gen_cert controller-manager "/CN=system:kube-controller-manager" clientAuth
	gen_cert scheduler "/CN=system:kube-scheduler" clientAuth
	if [[ ! -s $PKI/sa.pub ]]; then
		openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
		openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	fi
}

write_kubeconfig() { # file cert-name user
	cat >"$1" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: headroom-kube
		  cluster:
		    server: https://127.0.0.1:$API_PORT
		    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
		users:
		- name: $3
		  user:
		    client-certificate-data: $(base64 -w0 "$PKI/$2.crt")
		    client-key-data: $(base64 -w0 "$PKI/$2.key")
		contexts:
		- name: headroom-kube
		  context:
		    cluster: headroom-kube
		    user: $3
		current-context: headroom-kube
	EOF
	chmod 600 "$1"
}

# 4. The configuration files of the second containerd, the CNI and the kubelet.
write_configs() {
	local ip=$1
	mkdir -p "$STATE/containerd" "$STATE/cni/net.d" "$STATE/kubelet" "$STATE/pod-logs"
	cat >"$STATE/containerd/config.toml" <<-EOF
		# The cluster's own containerd: Docker's (and /etc/containerd) are not touched.
		version = 2
		root = "$STATE/containerd/root"
		state = "$STATE/containerd/state"
		[grpc]
		  address = "$SOCK"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$STATE/containerd/opt"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_IMAGE"
		  # Sessions here lack CAP_SYS_RESOURCE: a negative oom_score_adj fails runc.
		  restrict_oom_score_adj = true
		  netns_mounts_under_state_dir = true
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        SystemdCgroup = false
		        # runc's own state beside the rest, not in /run/containerd/runc.
		        Root = "$STATE/containerd/runc"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$STATE/cni/net.d"
	EOF
	cat >"$STATE/cni/net.d/10-headroom-kube.conflist" <<-EOF
		{
		  "cniVersion": "0.4.0",
		  "name": "headroom-kube",
		  "plugins": [
		    {
		      "type": "bridge",
		      "bridge": "$BRIDGE",
		      "isGateway": true,
		      "ipMasq": true,
		      "ipam": {
		        "type": "host-local",
		        "dataDir": "$STATE/cni/ipam",
		        "ranges": [[{"subnet": "$POD_CIDR"}]],
		        "routes": [{"dst": "0.0.0.0/0"}]
		      }
		    }
		  ]
		}
	EOF
	cat >"$STATE/kubelet/config.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		address: $ip
		port: 10250
		readOnlyPort: 0
		healthzBindAddress: 127.0.0.1
		healthzPort: 10248
		authentication:
		  x509:
		    clientCAFile: $PKI/ca.crt
		  webhook:
		    enabled: false
		  anonymous:
		    enabled: false
		authorization:
		  mode: AlwaysAllow
		tlsCertFile: $PKI/kubelet-serving.crt
		tlsPrivateKeyFile: $PKI/kubelet-serving.key
		containerRuntimeEndpoint: unix://$SOCK
		cgroupDriver: cgroupfs
		failSwapOn: false
		failCgroupV1: false
		clusterDomain: cluster.local
		resolvConf: /etc/resolv.conf
		podLogsDir: $STATE/pod-logs
		# A shared test machine: no eviction for a full-ish disk, and no image
		# garbage collection (pod images are imported, they cannot be pulled back).
		evictionHard:
		  memory.available: 100Mi
		  nodefs.available: 1%
		  nodefs.inodesFree: 1%
		  imagefs.available: 1%
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
		# A pod has no pids limit of its own: every pod's cgroup gets this one
		# (a fork bomb stops here). headroom's hardened profile's limit
		# (DefaultPidsLimit), so it is applied as on Docker.
		podPidsLimit: 1024
		# The machine as it was: the kubelet changes no kernel setting (it
		# refuses to start where one differs; kube-up sets them only with
		# consent) and makes no iptables chain (KUBE-FIREWALL's DROP rule on
		# INPUT and OUTPUT, the canaries, the hint): nothing here needs them.
		protectKernelDefaults: true
		makeIPTablesUtilChains: false
	EOF
}

# start NAME BINARY ARGS...: run it detached, log to $LOGS/NAME.log, record its PID.
start() {
	local name=$1 exe
	shift
	if pid_alive "$name"; then
		log "$name runs (pid $(<"$PIDS/$name.pid"))"
		return
	fi
	exe=$(readlink -f "$(command -v "$1")")
	echo "$exe" >"$PIDS/$name.exe"
	# Only stdin, stdout and stderr go with it: a descriptor the caller
	# holds (flock's lock, a CI pipe) kept open by a daemon for the
	# cluster's life holds the lock, or the pipe, as long.
	(
		for fd in /proc/self/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
		done
		exec setsid "$exe" "${@:2}" >>"$LOGS/$name.log" 2>&1 </dev/null
	) &
	echo $! >"$PIDS/$name.pid"
	log "$name started (pid $!, log $LOGS/$name.log)"
}

# wait_for NAME SECONDS DESCRIPTION COMMAND...: poll COMMAND until it succeeds;
# fail early (with the log's tail) if NAME's process is gone.
wait_for() {
	local name=$1 secs=$2 what=$3 deadline=$((SECONDS + $2))
	shift 3
	until "$@" >/dev/null 2>&1; do
		if ! pid_alive "$name"; then
			tail -n 30 "$LOGS/$name.log" >&2 || true
			die "$name exited while waiting for $what (log: $LOGS/$name.log)"
		fi
		((SECONDS < deadline)) || {
			tail -n 30 "$LOGS/$name.log" >&2 || true
			die "no $what within ${secs}s (log: $LOGS/$name.log)"
		}
		sleep 0.5
	done
}

# The aggregation layer (metrics-server's metrics.k8s.io, make
# kube-metrics): the front proxy's CA and client certificate, and routing
# to an APIService's endpoints directly (there is no kube-proxy to route a
# Service's ClusterIP). PodNodeSelector and PodTolerationRestriction (above)
# let a namespace's annotations pin its pods to nodes (make kube-scale's
# fake nodes); without the annotations they change nothing.
AGGREGATION_FLAGS=(
	--requestheader-client-ca-file "$PKI/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client
	--requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group
	--requestheader-extra-headers-prefix X-Remote-Extra-
	--proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key"
	--enable-aggregator-routing=true
)

https_ok() { curl -fsk --max-time 3 "$1"; }
node_ready() {
	[[ $(kctl get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

save_sysctls() {
	local kv
	[[ -f $STATE/sysctls.saved ]] && return
	for kv in "${KUBELET_SYSCTLS[@]}"; do
		[[ -r /proc/sys/${kv%%=*} ]] && echo "${kv%%=*} $(<"/proc/sys/${kv%%=*}")"
	done >"$STATE/sysctls.saved"
}

# kernel_settings: the machine-wide settings the kubelet needs. Where the
# machine has others, kube-up refuses, naming each and what it does, unless
# the user consents (HEADROOM_KUBE_SYSCTLS=set); then it sets them, the old
# values saved for kube-down. The kubelet itself changes none
# (protectKernelDefaults: true).
kernel_settings() {
	local kv key want have diff=()
	for kv in "${KUBELET_SYSCTLS[@]}"; do
		key=${kv%%=*} want=${kv#*=}
		have=$(<"/proc/sys/$key") || die "cannot read /proc/sys/$key"
		[[ $have == "$want" ]] || diff+=("${key//\//.}=$want (now $have)")
	done
	((${#diff[@]})) || return 0
	if [[ ${HEADROOM_KUBE_SYSCTLS:-} != set ]]; then
		die "the kubelet needs kernel settings this machine does not have, for the whole machine while the cluster is up: $(printf '%s; ' "${diff[@]}")kernel.panic=10 reboots the machine 10 s after a kernel panic, kernel.panic_on_oops=1 makes any oops a panic, vm.overcommit_memory=1 never refuses an allocation. kube-up changes none of them without your consent: make kube-up KUBE_SYSCTLS=set (or HEADROOM_KUBE_SYSCTLS=set kube/up.sh) sets them, and make kube-down puts the old values back"
	fi
	mkdir -p "$STATE"
	save_sysctls
	for kv in "${KUBELET_SYSCTLS[@]}"; do
		key=${kv%%=*} want=${kv#*=}
		have=$(<"/proc/sys/$key")
		[[ $have == "$want" ]] && continue
		echo "$want" >"/proc/sys/$key" || die "could not set ${key//\//.}=$want"
		log "sysctl ${key//\//.} = $want (was $have; HEADROOM_KUBE_SYSCTLS=set; make kube-down puts it back)"
	done
}

# save_dirs: which of HOST_DIRS the machine had before the cluster.
save_dirs() {
	local d
	[[ -f $STATE/dirs.before ]] && return
	for d in "${HOST_DIRS[@]}"; do
		if [[ -e $d ]]; then echo "$d"; fi
	done >"$STATE/dirs.before"
}

# save_chains: the kubelet's iptables chains this machine already had
# (another cluster's), which kube-down must leave.
save_chains() {
	[[ -f $STATE/chains.before ]] && return
	{
		iptables-save 2>/dev/null | sed -n 's/^:\([^ ]*\) .*/v4 \1/p'
		ip6tables-save 2>/dev/null | sed -n 's/^:\([^ ]*\) .*/v6 \1/p'
	} >"$STATE/chains.before"
}

main() {
	local t0=$SECONDS ip
	if [[ ${1:-} == --build-only ]]; then
		# make kube-build: the binaries alone (CI builds them beside the
		# tests, niced, and starts the cluster after).
		build_binaries
		build_etcd
		return
	fi
	# Before anything starts: the machine's kernel settings, with consent.
	pid_alive kubelet || kernel_settings
	install_missing
	build_binaries
	build_etcd
	ip=$(host_ip)
	mkdir -p "$STATE" "$PIDS" "$LOGS" "$STATE/kubelet"
	make_pki "$ip"
	write_kubeconfig "$KUBECONFIG_ADMIN" admin kubernetes-admin
	write_kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager system:kube-controller-manager
	write_kubeconfig "$STATE/scheduler.kubeconfig" scheduler system:kube-scheduler
	write_kubeconfig "$STATE/kubelet/kubeconfig" kubelet "system:node:$NODE"
	write_configs "$ip"
	pid_alive containerd || save_dirs

	# An etcd kube-up started before it was built here (Debian's) runs
	# on: only a fresh state dir may take the new one (etcd 3.6 does not
	# read a 3.4 data dir).
	if pid_alive etcd && [[ $(<"$PIDS/etcd.exe") != "$(readlink -f "$ETCD_BIN")" ]]; then
		log "warning: the running etcd is $(<"$PIDS/etcd.exe"), not $ETCD_BIN: make kube-down && make kube-up to switch (the API server disables watch progress requests on an etcd before 3.4.31)"
	fi
	start etcd "$ETCD_BIN" --name headroom-kube --data-dir "$STATE/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
		--initial-cluster "headroom-kube=http://127.0.0.1:$((ETCD_PORT + 1))" --listen-metrics-urls ""
	start containerd containerd --config "$STATE/containerd/config.toml"
	wait_for containerd 60 "containerd's socket" ctr --address "$SOCK" version
	if ! kctr images ls -q | grep -qx "$PAUSE_IMAGE"; then
		build_pause
		docker save "$PAUSE_IMAGE" | kctr images import - >/dev/null
		log "pause image $PAUSE_IMAGE imported"
	fi
	wait_for etcd 60 "etcd's health" curl -fs --max-time 3 "http://127.0.0.1:$ETCD_PORT/health"

	start kube-apiserver kube-apiserver --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address 127.0.0.1 --secure-port "$API_PORT" --advertise-address "$ip" \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" \
		--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP,Hostname \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
		--service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC \
		--enable-admission-plugins NodeRestriction,PodNodeSelector,PodTolerationRestriction \
		"${AGGREGATION_FLAGS[@]}" --allow-privileged=true --profiling=false
	wait_for kube-apiserver 120 "the apiserver's /readyz" kctl get --raw /readyz

	start kube-controller-manager kube-controller-manager --kubeconfig "$STATE/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$STATE/controller-manager.kubeconfig" --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --controllers '*,-nodeipam' --leader-elect=false \
		--root-ca-file "$PKI/ca.crt" --service-account-private-key-file "$PKI/sa.key" --use-service-account-credentials \
		--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
		--service-cluster-ip-range "$SERVICE_CIDR" --profiling=false
	start kube-scheduler kube-scheduler --kubeconfig "$STATE/scheduler.kubeconfig" \
		--authentication-kubeconfig "$STATE/scheduler.kubeconfig" --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false --profiling=false

	pid_alive kubelet || save_chains
	# A kubelet that runs keeps the configuration it started with: say so
	# when this one differs (make kube-down && make kube-up applies it).
	if pid_alive kubelet && ! cmp -s "$STATE/kubelet/config.yaml" "$STATE/kubelet/config.started"; then
		log "warning: the running kubelet was started with another configuration than $STATE/kubelet/config.yaml (diff it with config.started); make kube-down && make kube-up to apply it"
	fi
	pid_alive kubelet || cp "$STATE/kubelet/config.yaml" "$STATE/kubelet/config.started"
	start kubelet kubelet --config "$STATE/kubelet/config.yaml" --kubeconfig "$STATE/kubelet/kubeconfig" \
		--root-dir "$STATE/kubelet/root" --hostname-override "$NODE" --node-ip "$ip"

	wait_for kube-controller-manager 120 "the controller-manager's /healthz" https_ok https://127.0.0.1:10257/healthz
	wait_for kube-scheduler 120 "the scheduler's /healthz" https_ok https://127.0.0.1:10259/healthz
	wait_for kubelet 180 "node $NODE Ready" node_ready
	wait_for kube-controller-manager 120 "the default service account" kctl -n default get serviceaccount default

	log "up in $((SECONDS - t0)) s: node $NODE Ready, Kubernetes $KUBE_VERSION"
	log "kubeconfig: $KUBECONFIG_ADMIN   (kubectl: $BIN/kubectl)"
	log "load images: kube/load-image.sh IMAGE...   stop: make kube-down"
	echo "$KUBECONFIG_ADMIN"
}

# Sourcing this file (to test one step) defines the steps without running them.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
