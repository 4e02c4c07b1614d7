// Command hr-dockerfile is BuildKit's Dockerfile frontend at the version
// headroom's go.mod pins, run by an engine's BuildKit as a gateway
// frontend from a local image (runner/docker's FrontendImage): engines
// older than Docker 23 carry a built-in frontend that predates heredocs
// and other syntax Harbor's tasks use, and no registry need be reachable
// to get a newer one.
package main

import (
	"context"
	"fmt"
	"os"

	dockerfile "github.com/moby/buildkit/frontend/dockerfile/builder"
	"github.com/moby/buildkit/frontend/gateway/grpcclient"
	_ "github.com/moby/buildkit/util/grpcutil/encoding/proto"
)

func main() {
	if err := grpcclient.RunFromEnvironment(context.Background(), dockerfile.Build); err != nil {
		fmt.Fprintf(os.Stderr, "hr-dockerfile: %v\n", err)
		os.Exit(1)
	}
}
