package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/store"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
)

// engine is a connected Docker Engine and what it said about itself.
type engine struct {
	cli  *client.Client
	info store.Engine
	host store.Host
	// local says the engine runs on this machine (its socket is a unix
	// socket), so this machine's memory is the trials' memory.
	local bool
}

func connectEngine(ctx context.Context) (*engine, error) {
	cli, err := docker.Connect()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := cli.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker engine not reachable at %s: %v (`headroom doctor` says more)", cli.DaemonHost(), err)
	}
	e := &engine{cli: cli, local: strings.HasPrefix(cli.DaemonHost(), "unix://")}
	e.info = store.Engine{
		Version:       info.ServerVersion,
		APIVersion:    cli.ClientVersion(),
		CgroupVersion: info.CgroupVersion,
		CgroupDriver:  info.CgroupDriver,
		StorageDriver: info.Driver,
		OS:            info.OperatingSystem,
	}
	e.host = store.Host{Kernel: info.KernelVersion, CPUs: info.NCPU, MemoryBytes: info.MemTotal}
	e.host.Hostname, _ = os.Hostname()
	if e.local {
		if vm, err := mem.VirtualMemory(); err == nil {
			e.host.MemoryBytes = int64(vm.Total)
			e.host.AvailableBytesAtStart = int64(vm.Available)
		}
		if k, err := host.KernelVersion(); err == nil {
			e.host.Kernel = k
		}
	}
	if e.host.CPUs == 0 {
		e.host.CPUs = runtime.NumCPU()
	}
	return e, nil
}

// capacity is what guarantees may sum to: host memory minus the reserve.
func (e *engine) capacity(reserve int64) int64 {
	e.host.ReserveBytes = reserve
	e.host.GuaranteeCapacityBytes = max(e.host.MemoryBytes-reserve, 0)
	return e.host.GuaranteeCapacityBytes
}

// workloadImage makes sure the built-in workload image exists, building it
// from this executable when missing.
func (e *engine) workloadImage(ctx context.Context, force bool, progress func(string)) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find headroom's own executable: %w", err)
	}
	return docker.EnsureWorkloadImage(ctx, e.cli, self, force, progress)
}

// checkImages fails, naming the image, when a task's image is not local.
func (e *engine) checkImages(ctx context.Context, tasks []model.Task) (map[string]string, error) {
	ids := map[string]string{}
	for _, t := range tasks {
		if _, ok := ids[t.Image]; ok {
			continue
		}
		ins, err := e.cli.ImageInspect(ctx, t.Image)
		if err != nil {
			return nil, fmt.Errorf("task %s: image %s is not on this engine: build or pull it first (%v)", t.Name, t.Image, err)
		}
		ids[t.Image] = ins.ID
	}
	return ids, nil
}
