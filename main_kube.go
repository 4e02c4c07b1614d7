//go:build !nokube

package main

import (
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/runner/kube"
)

// registerKube registers the Kubernetes backend. Built with -tags nokube
// (main_nokube.go) the console leaves client-go out: half of a clean
// build's compile time, which is how `make run` gets to its first frame
// quickly on a fresh clone.
//
// Its images are built by the local Docker engine (docker.OpenBuilder)
// and then put on the cluster: the backend itself knows only the builder.
func registerKube() { runner.Register(kube.Definition(docker.OpenBuilder)) }
