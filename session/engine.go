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
// or a pull for task directories. Each image is prepared once. The first
// image that cannot be prepared is the error.
func (e *Engine) TaskImages(ctx context.Context, tasks []model.Task, progress func(string)) error {
	_, err := e.taskImages(ctx, tasks, progress, false, nil)
	return err
}

// buildTail is how many of a failed build's last output lines its task's
// trials quote.
const buildTail = 4

// taskImages is TaskImages that, with keepGoing, prepares every image it
// can and returns the tasks whose image could not be, with why (the last
// lines of the build output); skip names tasks not to prepare.
func (e *Engine) taskImages(ctx context.Context, tasks []model.Task, progress func(string), keepGoing bool, skip map[string]string) (map[string]string, error) {
	if progress == nil {
		progress = func(string) {}
	}
	failed := map[string]string{}
	done := map[string]string{}
	failedKey := map[string]string{}
	for i := range tasks {
		t := &tasks[i]
		if _, ok := skip[t.Name]; ok {
			continue
		}
		key := t.Image
		if t.Build != nil {
			key = t.Image + "|" + t.Build.Context + "|" + t.Build.Dockerfile
		}
		if img, ok := done[key]; ok {
			usedImage(t, img)
			continue
		}
		if why, ok := failedKey[key]; ok {
			failed[t.Name] = why
			continue
		}
		var tail []string
		seen := func(line string) {
			progress(line)
			if buildChatter(t.Name, line) {
				return
			}
			if tail = append(tail, line); len(tail) > buildTail {
				tail = tail[1:]
			}
		}
		var img string
		var err error
		switch t.Image {
		case taskfile.BuiltinImage:
			img, err = e.WorkloadImage(ctx, false, seen)
		case taskfile.BuiltinDebian:
			img, err = docker.EnsureDebianImage(ctx, e.Cli, false, seen)
		case taskfile.BuiltinDebianCache:
			img, err = docker.EnsureDebianCacheImage(ctx, e.Cli, false, seen)
		default:
			img, err = docker.EnsureTaskImage(ctx, e.Cli, *t, seen)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "task "+t.Name+":") {
				err = fmt.Errorf("task %s: %w", t.Name, err)
			}
			if !keepGoing || ctx.Err() != nil {
				return nil, err
			}
			why := err.Error()
			if len(tail) > 0 {
				why += "; last build output: " + strings.Join(tail, " | ")
			}
			failed[t.Name], failedKey[key] = why, why
			continue
		}
		done[key] = img
		usedImage(t, img)
	}
	// Each compose sidecar's image: built from its build:, else used or
	// pulled by name.
	for i := range tasks {
		t := &tasks[i]
		if _, ok := skip[t.Name]; ok {
			continue
		}
		if _, bad := failed[t.Name]; bad {
			continue
		}
		if err := docker.EnsureSidecarImages(ctx, e.Cli, t, progress); err != nil {
			err = fmt.Errorf("task %s: %w", t.Name, err)
			if !keepGoing || ctx.Err() != nil {
				return nil, err
			}
			failed[t.Name] = err.Error()
		}
	}
	return failed, nil
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

// buildChatter says whether a build output line is the engine's (or
// headroom's) bookkeeping rather than what the Dockerfile's commands
// printed.
func buildChatter(task, line string) bool {
	for _, p := range []string{"--->", "Step ", "Removing intermediate container", "Successfully ", "building " + task + " from ", "pulling "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// checkImages fails, naming the image, when a task's image is not local
// (just made, it can only have been removed since: the engine's
// trouble, not the task's); it returns each image's id for the manifest.
// Tasks in notRun are not checked.
func (e *Engine) checkImages(ctx context.Context, tasks []model.Task, notRun map[string]string) (map[string]string, error) {
	ids := map[string]string{}
	for _, t := range tasks {
		if _, ok := notRun[t.Name]; ok {
			continue
		}
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
