package kube

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// The backend depends on an image builder, not on the Docker backend:
// neither runner/docker nor the Docker SDK is among its packages (the
// local engine's builder is given it at registration, main_kube.go).
func TestKubeDependsOnNoDockerBackend(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/headroom-eval/headroom/runner/docker" || strings.HasPrefix(pkg, "github.com/docker/docker/") {
			t.Errorf("runner/kube depends on %s", pkg)
		}
	}
}

// builder is an ImageBuilder that says what it was asked.
type builder struct {
	asked  []string
	closed bool
}

func (b *builder) WorkloadImage(_ context.Context, exe string, force bool, _ func(string)) (string, error) {
	b.asked = append(b.asked, "workload "+exe)
	return "headroom-workload:abc", nil
}

func (b *builder) WorkloadImageBuilt(_ context.Context, exe string) (string, bool, error) {
	b.asked = append(b.asked, "built "+exe)
	return "headroom-workload:abc", true, nil
}

func (b *builder) PrepareImage(_ context.Context, task model.Task, _ bool, _ func(string)) (string, error) {
	b.asked = append(b.asked, "prepare "+task.Image)
	return task.Image, nil
}

func (b *builder) ImageReady(_ context.Context, task model.Task) (string, bool) {
	b.asked = append(b.asked, "ready "+task.Image)
	return task.Image, true
}

func (b *builder) ImageID(_ context.Context, ref string) (string, error) {
	b.asked = append(b.asked, "id "+ref)
	return "sha256:1", nil
}

func (b *builder) Close() error { b.closed = true; return nil }

// Images come from the builder the backend was registered with, opened
// once, when first needed; the cluster's names of them (the registry's
// prefix) lead back to the builder's; Close closes it. Registered
// without one, the backend says so.
func TestImagesComeFromTheRegisteredBuilder(t *testing.T) {
	ctx := context.Background()
	b, opened := &builder{}, 0
	p := newPlatform(nil, nil, map[string]string{OptNamespace: "hr", OptRegistry: "reg.example/"})
	p.build = func(context.Context) (runner.ImageBuilder, error) { opened++; return b, nil }
	if ref, built, err := p.WorkloadImageBuilt(ctx, "/bin/hr-workload"); err != nil || !built || ref != "reg.example/headroom-workload:abc" {
		t.Fatalf("workload image built: %q %v %v", ref, built, err)
	}
	task := model.Task{Image: "python:3.12"}
	if ref, ready := p.ImageReady(ctx, task); !ready || ref != "reg.example/python:3.12" {
		t.Errorf("image ready: %q %v", ref, ready)
	}
	p.images["reg.example/python:3.12"] = "python:3.12" // as toCluster records a push
	if id, err := p.ImageID(ctx, "reg.example/python:3.12"); err != nil || id != "sha256:1" {
		t.Errorf("image id: %q %v", id, err)
	}
	if err := p.Close(); err != nil || !b.closed || opened != 1 {
		t.Errorf("close: %v, builder closed %v, opened %d times", err, b.closed, opened)
	}
	want := "built /bin/hr-workload|ready python:3.12|id python:3.12"
	if got := strings.Join(b.asked, "|"); got != want {
		t.Errorf("asked the builder %q, want %q", got, want)
	}

	none := newPlatform(nil, nil, map[string]string{OptNamespace: "hr"})
	if _, err := none.PrepareImage(ctx, task, false, nil); err == nil || !strings.Contains(err.Error(), "registered without one") {
		t.Errorf("no builder: %v", err)
	}
}
