// Command headroom measures how container resources change agentic
// benchmark scores. Trials' containers run a small program of their own
// (cmd/hr-workload, found or built by runner.WorkloadBinary); called by
// that name, this binary is that program too, for a console copied alone.
package main

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/headroom-eval/headroom/cli"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
)

func main() {
	if filepath.Base(os.Args[0]) == filepath.Base(wire.Binary) {
		os.Exit(workload.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	// headroom mostly waits (on the engine, on cgroup ticks, on the
	// terminal): one processor for its goroutines spares the scheduler's
	// spinning and work stealing between threads, which on a host whose
	// cores the trials keep busy cost it about 7% of its own CPU
	// (docs/PERFORMANCE.md). GOMAXPROCS in the environment still decides.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	// The backends trials can run on (--backend): a new one is its
	// package and one line here (the Kubernetes one in main_kube.go).
	runner.Register(docker.Definition())
	registerKube()
	os.Exit(profiled(cli.Execute))
}

// profiled runs f under the CPU profiler when HEADROOM_CPUPROFILE names a
// file: how headroom's own cost is found (docs/PERFORMANCE.md).
func profiled(f func() int) int {
	path := os.Getenv("HEADROOM_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}
