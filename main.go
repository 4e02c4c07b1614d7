// Command headroom measures how container resources change agentic
// benchmark scores. Called as hr-workload (inside the built-in tasks'
// containers) it is the synthetic agent instead.
package main

import (
	"os"
	"path/filepath"

	"github.com/headroom-eval/headroom/cli"
	"github.com/headroom-eval/headroom/workload"
)

func main() {
	if filepath.Base(os.Args[0]) == filepath.Base(workload.Binary) {
		os.Exit(workload.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(cli.Execute())
}
