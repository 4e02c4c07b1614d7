//go:build nokube

package main

import (
	"context"
	"errors"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// registerKube, in a console built without the Kubernetes backend (make
// run's quick first build), names the backend so that --backend kubernetes
// says how to get it rather than that it does not exist.
func registerKube() {
	runner.Register(runner.BackendDef{
		Name:      "kubernetes",
		Summary:   "a Kubernetes cluster (not in this build: `make build` builds headroom with it)",
		Reproduce: func(model.Task, string, model.ResourcePolicy) string { return "" },
		Open: func(context.Context, map[string]string) (runner.Platform, error) {
			return nil, errors.New("this headroom was built without the Kubernetes backend (`make run` builds the console alone for a quick first start): run `make build`, which builds it with client-go, and use bin/headroom")
		},
	})
}
