//go:build tools

// Package build only pins the Kubernetes commands kube/up.sh builds with
// `go build -o DIR k8s.io/kubernetes/cmd/...`; it is never compiled.
package build

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
