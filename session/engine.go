// Package session runs one sweep end to end on a Docker Engine: it
// connects, checks capacity, builds the workload image, plans, records to
// the store and hands the runner's event stream to whoever watches (the
// headless command or the console).
package session

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
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
)

// Engine is a connected Docker Engine and what it said about itself.
type Engine struct {
	Cli  *client.Client
	Info store.Engine
	Host store.Host
	// Local says the engine runs on this machine (a unix socket), so this
	// machine's memory is the trials' memory.
	Local bool
}

// Connect opens the engine named by the environment (DOCKER_HOST etc.).
func Connect(ctx context.Context) (*Engine, error) {
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
	e := &Engine{Cli: cli, Local: strings.HasPrefix(cli.DaemonHost(), "unix://")}
	e.Info = store.Engine{
		Version:       info.ServerVersion,
		APIVersion:    cli.ClientVersion(),
		CgroupVersion: info.CgroupVersion,
		CgroupDriver:  info.CgroupDriver,
		StorageDriver: info.Driver,
		OS:            info.OperatingSystem,
	}
	e.Host = store.Host{Kernel: info.KernelVersion, CPUs: info.NCPU, MemoryBytes: info.MemTotal}
	e.Host.Hostname, _ = os.Hostname()
	if e.Local {
		if vm, err := mem.VirtualMemory(); err == nil {
			e.Host.MemoryBytes = int64(vm.Total)
			e.Host.AvailableBytesAtStart = int64(vm.Available)
		}
		if k, err := host.KernelVersion(); err == nil {
			e.Host.Kernel = k
		}
	}
	if e.Host.CPUs == 0 {
		e.Host.CPUs = runtime.NumCPU()
	}
	return e, nil
}

// Close releases the client.
func (e *Engine) Close() error { return e.Cli.Close() }

// Capacity is what guarantees may sum to: host memory minus the reserve.
func (e *Engine) Capacity(reserve int64) int64 {
	return max(e.Host.MemoryBytes-reserve, 0)
}

// WorkloadImage makes sure the built-in workload image exists, building it
// from this executable when missing.
func (e *Engine) WorkloadImage(ctx context.Context, force bool, progress func(string)) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find headroom's own executable: %w", err)
	}
	return docker.EnsureWorkloadImage(ctx, e.Cli, self, force, progress)
}

// WorkloadImageBuilt says whether this headroom's workload image is on
// the engine, building nothing.
func (e *Engine) WorkloadImageBuilt(ctx context.Context) (tag string, built bool, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", false, fmt.Errorf("find headroom's own executable: %w", err)
	}
	return docker.WorkloadImageBuilt(ctx, e.Cli, self)
}

// TaskImages makes sure every task's image is on the engine and names it
// in the task: the workload image for built-in tasks, the Debian images
// for the real ones, a Dockerfile build (cached by its context's digest)
// or a pull for task directories. Each image is prepared once.
func (e *Engine) TaskImages(ctx context.Context, tasks []model.Task, progress func(string)) error {
	if progress == nil {
		progress = func(string) {}
	}
	done := map[string]string{}
	for i := range tasks {
		t := &tasks[i]
		key := t.Image
		if t.Build != nil {
			key = t.Image + "|" + t.Build.Context + "|" + t.Build.Dockerfile
		}
		if img, ok := done[key]; ok {
			usedImage(t, img)
			continue
		}
		var img string
		var err error
		switch t.Image {
		case taskfile.BuiltinImage:
			img, err = e.WorkloadImage(ctx, false, progress)
		case taskfile.BuiltinDebian:
			img, err = docker.EnsureDebianImage(ctx, e.Cli, false, progress)
		case taskfile.BuiltinDebianCache:
			img, err = docker.EnsureDebianCacheImage(ctx, e.Cli, false, progress)
		default:
			img, err = docker.EnsureTaskImage(ctx, e.Cli, *t, progress)
		}
		if err != nil {
			if t.Image == taskfile.BuiltinDebian || t.Image == taskfile.BuiltinDebianCache {
				return fmt.Errorf("task %s: %w", t.Name, err)
			}
			return err
		}
		done[key] = img
		usedImage(t, img)
	}
	return nil
}

// usedImage records the image a task runs: a pinned image that ran (as in
// Harbor) leaves the Dockerfile beside it unbuilt, and the manifest must
// not say the image was built from it.
func usedImage(t *model.Task, img string) {
	if t.Build != nil && t.Image != "" && img == t.Image {
		t.Build = nil
	}
	t.Image = img
}

// checkImages fails, naming the image, when a task's image is not local;
// it returns each image's id for the manifest.
func (e *Engine) checkImages(ctx context.Context, tasks []model.Task) (map[string]string, error) {
	ids := map[string]string{}
	for _, t := range tasks {
		if _, ok := ids[t.Image]; ok {
			continue
		}
		ins, err := e.Cli.ImageInspect(ctx, t.Image)
		if err != nil {
			return nil, fmt.Errorf("task %s: image %s is not on this engine: build or pull it first (%v)", t.Name, t.Image, err)
		}
		ids[t.Image] = ins.ID
	}
	return ids, nil
}
