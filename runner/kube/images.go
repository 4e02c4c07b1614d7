package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// Images are built where headroom runs, by the builder the backend was
// registered with (the local Docker engine's), then made available to the cluster:
// pushed to --image-registry as REGISTRY/NAME:TAG, or imported into a
// local cluster's containerd (--containerd-socket), or, with neither,
// left for the user to import (the error of a pod that cannot find its
// image says how).

// imageBuilder is the builder of the images, opened on first use.
func (p *Platform) imageBuilder(ctx context.Context) (runner.ImageBuilder, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.builder != nil {
		return p.builder, nil
	}
	if p.build == nil {
		return nil, errors.New("images for the cluster are built with the local Docker engine, and this backend was registered without one")
	}
	l, err := p.build(ctx)
	if err != nil {
		return nil, fmt.Errorf("images for the cluster are built with the local Docker engine: %w", err)
	}
	p.builder = l
	return l, nil
}

// pullPolicy: images headroom put there itself are never pulled without a
// registry (a missing one fails at once, saying so).
func (p *Platform) pullPolicy() corev1.PullPolicy {
	if p.set[OptRegistry] != "" {
		return corev1.PullIfNotPresent
	}
	return corev1.PullNever
}

// WorkloadImage builds headroom's image locally and puts it on the cluster.
func (p *Platform) WorkloadImage(ctx context.Context, exe string, force bool, progress func(string)) (string, error) {
	l, err := p.imageBuilder(ctx)
	if err != nil {
		return "", err
	}
	ref, err := l.WorkloadImage(ctx, exe, force, progress)
	if err != nil {
		return "", err
	}
	return p.toCluster(ctx, ref, progress)
}

// WorkloadImageBuilt says whether the image is built locally and, where
// headroom can tell, on the cluster.
func (p *Platform) WorkloadImageBuilt(ctx context.Context, exe string) (string, bool, error) {
	l, err := p.imageBuilder(ctx)
	if err != nil {
		return "", false, err
	}
	ref, built, err := l.WorkloadImageBuilt(ctx, exe)
	if err != nil || !built {
		return ref, built, err
	}
	target := p.clusterRef(ref)
	if sock := p.set[OptContainerd]; sock != "" && p.set[OptRegistry] == "" {
		ok, err := ctrHas(ctx, sock, ref)
		return target, ok, err
	}
	return target, true, nil
}

// PrepareImage builds or pulls the task's image locally and puts it on
// the cluster.
func (p *Platform) PrepareImage(ctx context.Context, task model.Task, force bool, progress func(string)) (string, error) {
	l, err := p.imageBuilder(ctx)
	if err != nil {
		return "", err
	}
	ref, err := l.PrepareImage(ctx, task, force, progress)
	if err != nil {
		return "", err
	}
	return p.toCluster(ctx, ref, progress)
}

// ImageReady says which image a task would run on the cluster and
// whether it is there (built locally and, where headroom can tell,
// imported), preparing nothing.
func (p *Platform) ImageReady(ctx context.Context, task model.Task) (string, bool) {
	l, err := p.imageBuilder(ctx)
	if err != nil {
		return "", false
	}
	ref, ready := l.ImageReady(ctx, task)
	if !ready {
		return p.clusterRef(ref), false
	}
	if sock := p.set[OptContainerd]; sock != "" && p.set[OptRegistry] == "" {
		ok, err := ctrHas(ctx, sock, ref)
		return ref, ok && err == nil
	}
	return p.clusterRef(ref), true
}

// PrepareSidecars builds or pulls each compose sidecar's image locally,
// as the task's own, and puts it on the cluster, naming it in the task.
func (p *Platform) PrepareSidecars(ctx context.Context, task *model.Task, progress func(string)) error {
	if len(task.Sidecars) == 0 {
		return nil
	}
	if err := sidecarRefusal(*task); err != nil {
		return err
	}
	l, err := p.imageBuilder(ctx)
	if err != nil {
		return err
	}
	for i := range task.Sidecars {
		sc := &task.Sidecars[i]
		ref, err := l.PrepareImage(ctx, model.Task{Name: task.Name + "/" + sc.Name, Image: sc.ImageToUse(), Build: sc.Build}, false, progress)
		if err == nil {
			ref, err = p.toCluster(ctx, ref, progress)
		}
		if err != nil {
			return fmt.Errorf("sidecar %s: %w", sc.Name, err)
		}
		sc.Image = ref
	}
	return nil
}

// ImageID is the local engine's id of the image a cluster reference
// was made from.
func (p *Platform) ImageID(ctx context.Context, ref string) (string, error) {
	l, err := p.imageBuilder(ctx)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	local, ok := p.images[ref]
	p.mu.Unlock()
	if !ok {
		local = ref
	}
	return l.ImageID(ctx, local)
}

// clusterRef is the name the cluster knows a local image by.
func (p *Platform) clusterRef(ref string) string {
	reg := strings.TrimSuffix(p.set[OptRegistry], "/")
	if reg == "" {
		return ref
	}
	return reg + "/" + ref
}

// toCluster makes a local image available to the cluster, once per image.
func (p *Platform) toCluster(ctx context.Context, ref string, progress func(string)) (string, error) {
	if progress == nil {
		progress = func(string) {}
	}
	target := p.clusterRef(ref)
	p.mu.Lock()
	_, done := p.images[target]
	p.mu.Unlock()
	if done {
		return target, nil
	}
	switch sock := p.set[OptContainerd]; {
	case p.set[OptRegistry] != "":
		progress("pushing " + target)
		if err := run(ctx, nil, "docker", "tag", ref, target); err != nil {
			return "", err
		}
		if err := run(ctx, nil, "docker", "push", target); err != nil {
			return "", fmt.Errorf("push %s: %w (is `docker login` done for the registry?)", target, err)
		}
	case sock != "":
		has, err := ctrHas(ctx, sock, ref)
		if err != nil {
			return "", err
		}
		if !has {
			progress("importing " + ref + " into the cluster's containerd")
			if err := importImage(ctx, sock, ref); err != nil {
				return "", err
			}
		}
	default:
		progress(fmt.Sprintf("the cluster must hold %s already (no --image-registry, no --containerd-socket): import it with `docker save %s | ctr -n k8s.io images import -` on the node", ref, ref))
	}
	p.mu.Lock()
	p.images[target] = ref
	p.mu.Unlock()
	return target, nil
}

// ctrHas says whether containerd's k8s.io namespace holds ref.
func ctrHas(ctx context.Context, sock, ref string) (bool, error) {
	var out bytes.Buffer
	if err := run(ctx, &out, "ctr", "--address", sock, "-n", "k8s.io", "images", "ls", "-q"); err != nil {
		return false, err
	}
	want := normalizeRef(ref)
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.TrimSpace(l) == want {
			return true, nil
		}
	}
	return false, nil
}

// importImage streams `docker save ref` into `ctr images import`.
func importImage(ctx context.Context, sock, ref string) error {
	save := exec.CommandContext(ctx, "docker", "save", ref)
	imp := exec.CommandContext(ctx, "ctr", "--address", sock, "-n", "k8s.io", "images", "import", "-")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	imp.Stdin = pipe
	var serr, ierr bytes.Buffer
	save.Stderr, imp.Stderr = &serr, &ierr
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save %s: %w", ref, err)
	}
	if err := imp.Run(); err != nil {
		_ = save.Process.Kill()
		_ = save.Wait()
		return fmt.Errorf("ctr images import %s: %w: %s", ref, err, strings.TrimSpace(ierr.String()))
	}
	if err := save.Wait(); err != nil {
		return fmt.Errorf("docker save %s: %w: %s", ref, err, strings.TrimSpace(serr.String()))
	}
	return nil
}

// normalizeRef is the full name containerd gives an image reference
// (docker.io/library/ for bare names).
func normalizeRef(ref string) string {
	name := ref
	if !strings.Contains(name, ":") && !strings.Contains(name, "@") {
		name += ":latest"
	}
	first, _, found := strings.Cut(name, "/")
	if !found {
		return "docker.io/library/" + name
	}
	if strings.ContainsAny(first, ".:") || first == "localhost" {
		return name
	}
	return "docker.io/" + name
}

func run(ctx context.Context, stdout io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
