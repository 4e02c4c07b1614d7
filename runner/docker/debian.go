package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/headroom-eval/headroom/runner"
)

// The real userland images, made without any registry: a Debian root file
// system from debootstrap loaded with `docker import`, and the same with
// the data-science stack's packages downloaded into apt's cache so that a
// real install can run with no network at all.
const (
	DebianImage      = "headroom-debian:bookworm"
	DebianCacheImage = "headroom-debian:bookworm-ds-cache"
	// DebianSuite and the packages the real install workload installs.
	DebianSuite = "bookworm"
)

// DataSciencePackages are what the real bn-fit-modify's heavy agent
// installs (`pip install pandas networkx scikit-learn`, the install a
// tight limit kills before a line of the solution exists), from Debian.
var DataSciencePackages = []string{"python3-pandas", "python3-networkx", "python3-sklearn"}

// DebianMirror is the package mirror debootstrap and apt use
// (HEADROOM_DEBIAN_MIRROR overrides).
func DebianMirror() string {
	if m := os.Getenv("HEADROOM_DEBIAN_MIRROR"); m != "" {
		return m
	}
	return "http://deb.debian.org/debian"
}

func imageExists(ctx context.Context, cli *client.Client, ref string) (bool, error) {
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return true, nil
	} else if !cerrdefs.IsNotFound(err) {
		return false, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return false, nil
}

// EnsureDebianImage makes headroom-debian:bookworm unless it exists: a
// minimal Debian with python3, by debootstrap (needs root and the
// debootstrap program) and docker import. About 40 MB downloaded and a
// minute and a half here.
func EnsureDebianImage(ctx context.Context, cli *client.Client, force bool, progress func(string)) (string, error) {
	if ok, err := imageExists(ctx, cli, DebianImage); err != nil || (ok && !force) {
		return DebianImage, err
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return "", fmt.Errorf("making %s needs debootstrap: install it (`apt-get install debootstrap`) and run `headroom images build --real` again", DebianImage)
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("making %s runs debootstrap, which needs root: run `sudo headroom images build --real`", DebianImage)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	if err := os.MkdirAll(filepath.Join(base, "headroom"), 0o755); err != nil {
		return "", err
	}
	root, err := os.MkdirTemp(filepath.Join(base, "headroom"), "debootstrap-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(root)
	progress(fmt.Sprintf("debootstrap %s from %s into %s", DebianSuite, DebianMirror(), root))
	cmd := exec.CommandContext(ctx, "debootstrap", "--variant=minbase", "--include=python3,ca-certificates", DebianSuite, root, DebianMirror())
	if err := runLogged(cmd, progress); err != nil {
		return "", fmt.Errorf("debootstrap failed: %w (is %s reachable? HEADROOM_DEBIAN_MIRROR names another mirror)", err, DebianMirror())
	}
	// The downloaded packages are installed; they need not be in the image.
	debs, _ := filepath.Glob(filepath.Join(root, "var/cache/apt/archives/*.deb"))
	for _, d := range debs {
		os.Remove(d)
	}
	progress("importing the root file system as " + DebianImage)
	tarCmd := exec.CommandContext(ctx, "tar", "-C", root, "--numeric-owner", "-c", ".")
	out, err := tarCmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	tarCmd.Stderr = &stderr
	if err := tarCmd.Start(); err != nil {
		return "", err
	}
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: out, SourceName: "-"}, DebianImage, image.ImportOptions{
		Changes: []string{`CMD ["/bin/bash"]`, "ENV LANG=C.UTF-8", "LABEL " + runner.LabelHeadroom + ".image=debian"},
	})
	if err == nil {
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
	}
	if werr := tarCmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("tar: %v: %s", werr, stderr.String())
	}
	if err != nil {
		return "", fmt.Errorf("docker import of %s: %w", DebianImage, err)
	}
	return DebianImage, nil
}

// EnsureDebianCacheImage makes headroom-debian:bookworm-ds-cache unless it
// exists: the Debian image after `apt-get update` and `apt-get install
// --download-only` of the data-science stack, so that trials can install
// it for real with no network (egress is a noise source of its own).
func EnsureDebianCacheImage(ctx context.Context, cli *client.Client, force bool, progress func(string)) (string, error) {
	if ok, err := imageExists(ctx, cli, DebianCacheImage); err != nil || (ok && !force) {
		return DebianCacheImage, err
	}
	if _, err := EnsureDebianImage(ctx, cli, false, progress); err != nil {
		return "", err
	}
	script := "set -e; apt-get update; apt-get install -y --no-install-recommends --download-only " + strings.Join(DataSciencePackages, " ") + "; du -sh /var/cache/apt/archives"
	progress("downloading " + strings.Join(DataSciencePackages, " ") + " into apt's cache (about 130 MB)")
	cfg := &container.Config{Image: DebianImage, Cmd: []string{"sh", "-c", script},
		Labels: map[string]string{runner.LabelHeadroom: "1", runner.LabelHeadroom + ".image": "debian-cache-build", runner.LabelOwner: runner.Owner()}}
	created, err := cli.ContainerCreate(ctx, cfg, &container.HostConfig{NetworkMode: "bridge"}, nil, nil, "")
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", DebianCacheImage, err)
	}
	defer func() {
		rmCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cli.ContainerRemove(rmCtx, created.ID, removeOptions)
	}()
	waitCh, errCh := cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return "", fmt.Errorf("preparing %s: %w", DebianCacheImage, err)
	}
	if logs, err := cli.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}); err == nil {
		w := runner.LineWriter(progress)
		_, _ = stdcopy.StdCopy(w, w, logs)
		w.Close()
		logs.Close()
	}
	select {
	case st := <-waitCh:
		if st.StatusCode != 0 {
			return "", fmt.Errorf("preparing %s: apt-get exited %d (is %s reachable from containers?)", DebianCacheImage, st.StatusCode, DebianMirror())
		}
	case err := <-errCh:
		return "", fmt.Errorf("preparing %s: %w", DebianCacheImage, err)
	}
	if _, err := cli.ContainerCommit(ctx, created.ID, container.CommitOptions{Reference: DebianCacheImage,
		Changes: []string{`CMD ["/bin/bash"]`, "LABEL " + runner.LabelHeadroom + ".image=debian-cache"}}); err != nil {
		return "", fmt.Errorf("committing %s: %w", DebianCacheImage, err)
	}
	return DebianCacheImage, nil
}

// runLogged runs cmd, relaying its output lines.
func runLogged(cmd *exec.Cmd, progress func(string)) error {
	w := runner.LineWriter(progress)
	// One writer for both: exec then lets one goroutine write at a time.
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	w.Close()
	return err
}
