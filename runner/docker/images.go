package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/workload"
)

// WorkloadRepo is the image repository of the built-in workload.
const WorkloadRepo = "headroom-workload"

// imageRecipe versions how the image is assembled; changing the recipe
// must change the tag even when the binary is the same.
const imageRecipe = "workload-image-v3: scratch, rootfs with the binary, /work and /tmp 1777\n"

// WorkloadTag names the workload image built from binary: its content
// digest, so a rebuilt headroom gets a fresh image and an unchanged one
// reuses its image. The digest is remembered by the file's identity (path,
// size, modification time), so starting does not hash 35 MB every time.
func WorkloadTag(binary string) (string, error) {
	st, err := os.Stat(binary)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s %s|%d|%d", imageRecipe, binary, st.Size(), st.ModTime().UnixNano())
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "headroom", "workload-tag")
		if b, err := os.ReadFile(cache); err == nil {
			if k, tag, ok := strings.Cut(string(b), "\n"); ok && k == key && strings.HasPrefix(tag, WorkloadRepo+":") {
				return strings.TrimSpace(tag), nil
			}
		}
	}
	tag, err := digestTag(binary)
	if err == nil && cache != "" {
		// Written aside and renamed: another headroom may read it meanwhile.
		_ = os.MkdirAll(filepath.Dir(cache), 0o700)
		tmp := fmt.Sprintf("%s.%d", cache, os.Getpid())
		if os.WriteFile(tmp, []byte(key+"\n"+tag+"\n"), 0o600) == nil {
			_ = os.Rename(tmp, cache)
		}
	}
	return tag, err
}

func digestTag(binary string) (string, error) {
	f, err := os.Open(binary)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	h.Write([]byte(imageRecipe))
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return WorkloadRepo + ":" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// checkStatic refuses a binary that needs a dynamic loader: the image is
// FROM scratch and has none.
func checkStatic(binary string) error {
	f, err := elf.Open(binary)
	if err != nil {
		return fmt.Errorf("%s is not a Linux executable: %w", binary, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked and cannot run in a FROM scratch image: rebuild with CGO_ENABLED=0 (`make build`)", binary)
		}
	}
	return nil
}

// EnsureWorkloadImage builds the workload image from binary (a static
// executable that runs workload.Main when called as hr-workload) unless it
// exists. progress receives the build's output lines.
func EnsureWorkloadImage(ctx context.Context, cli *client.Client, binary string, force bool, progress func(string)) (string, error) {
	tag, err := WorkloadTag(binary)
	if err != nil {
		return "", fmt.Errorf("workload binary: %w", err)
	}
	if !force {
		if ok, err := imageExists(ctx, cli, tag); err != nil || ok {
			return tag, err
		}
	}
	if err := checkStatic(binary); err != nil {
		return "", err
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return "", err
	}
	name := strings.TrimPrefix(workload.Binary, "/")
	// /work and /tmp are writable by anyone: the workload runs as nobody.
	// COPY keeps the modes of what it copies, not of the directory named,
	// so the whole root file system is one directory of the context.
	dockerfile := fmt.Sprintf("FROM scratch\nCOPY rootfs /\nENTRYPOINT [\"%s\"]\nCMD [\"idle\"]\n", workload.Binary)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(dockerfile)}, {"rootfs/", 0o755, nil}, {"rootfs/" + name, 0o755, bin}, {"rootfs/work/", 0o1777, nil}, {"rootfs/tmp/", 0o1777, nil}} {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}
		if strings.HasSuffix(f.name, "/") {
			hdr.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return "", err
		}
		if _, err := tw.Write(f.data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	resp, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{
		Tags:        []string{tag, WorkloadRepo + ":latest"},
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{LabelHeadroom + ".image": "workload"},
	})
	if err != nil {
		return "", fmt.Errorf("build %s: %w", tag, err)
	}
	defer resp.Body.Close()
	if progress == nil {
		progress = func(string) {}
	}
	if err := readBuildStream(resp.Body, progress); err != nil {
		return "", fmt.Errorf("build %s: %w", tag, err)
	}
	return tag, nil
}
