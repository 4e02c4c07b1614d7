package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload/wire"
)

// WorkloadRepo is the image repository of the built-in workload.
const WorkloadRepo = model.WorkloadRepo

// imageRecipe versions how the image is assembled; changing the recipe
// must change the tag even when the binary is the same.
const imageRecipe = "workload-image-v4: scratch, rootfs with the in-container program alone, /work and /tmp 1777\n"

// WorkloadTag names the workload image built from binary: its content
// digest, so a rebuilt headroom gets a fresh image and an unchanged one
// reuses its image. The digest is remembered by the file's identity (path,
// size, modification time), so starting does not hash 35 MB every time (a
// third of a second of the console's first frame; a file that put the key,
// which holds the recipe's newline, first was never read back). One small
// file per binary, so that two builds used in turn (an installed headroom
// and a checkout's bin/headroom) do not each evict the other's.
func WorkloadTag(binary string) (string, error) {
	st, err := os.Stat(binary)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s %s|%d|%d", imageRecipe, binary, st.Size(), st.ModTime().UnixNano())
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		sum := sha256.Sum256([]byte(key))
		cache = filepath.Join(dir, "headroom", "workload-tag-"+hex.EncodeToString(sum[:8]))
		// The tag first: the key holds the recipe's newline.
		if b, err := os.ReadFile(cache); err == nil {
			if tag, k, ok := strings.Cut(string(b), "\n"); ok && k == key+"\n" && strings.HasPrefix(tag, WorkloadRepo+":") {
				return tag, nil
			}
		}
	}
	tag, err := digestTag(binary)
	if err == nil && cache != "" {
		// Written aside and renamed: another headroom may read it meanwhile.
		_ = os.MkdirAll(filepath.Dir(cache), 0o700)
		tmp := fmt.Sprintf("%s.%d", cache, os.Getpid())
		if os.WriteFile(tmp, []byte(tag+"\n"+key+"\n"), 0o600) == nil {
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
			return fmt.Errorf("%s is dynamically linked: it needs this host's loader and libraries, which neither the workload image (FROM scratch) nor a task's image (where it is the step driver) can be counted on to have; rebuild it with CGO_ENABLED=0 (`make build`)", binary)
		}
	}
	return nil
}

// WorkloadImageBuilt says, without building anything, whether the
// workload image of binary is on the engine, and its tag. When it is not,
// the error says why it could not be built (a dynamically linked binary).
func WorkloadImageBuilt(ctx context.Context, cli *client.Client, binary string) (tag string, built bool, err error) {
	if binary == "" {
		return "", false, nil // the program is still to be built (runner.WorkloadBinary)
	}
	if tag, err = WorkloadTag(binary); err != nil {
		return "", false, fmt.Errorf("workload binary: %w", err)
	}
	// An image under the tag that headroom did not build is not built
	// (cachedImage): the first run builds it again.
	if built, err = cachedImage(ctx, cli, tag, func(string) {}); err != nil || built {
		return tag, built, err
	}
	return tag, false, checkStatic(binary)
}

// EnsureWorkloadImage builds the workload image from binary (the static
// in-container program, runner.WorkloadBinary: cmd/hr-workload, or the
// console, which runs workload.Main when called as hr-workload) unless it
// exists; the image holds that one file. progress receives the build's output lines.
func EnsureWorkloadImage(ctx context.Context, cli *client.Client, binary string, force bool, progress func(string)) (string, error) {
	tag, err := WorkloadTag(binary)
	if err != nil {
		return "", fmt.Errorf("workload binary: %w", err)
	}
	if progress == nil {
		progress = func(string) {}
	}
	if !force {
		// Used only when headroom built it (cachedImage).
		if ok, err := cachedImage(ctx, cli, tag, progress); err != nil || ok {
			return tag, err
		}
	}
	if err := checkStatic(binary); err != nil {
		return "", err
	}
	// The context is streamed as it is written: held in memory, the
	// binary's copies took headroom's RSS past 160 MiB at the first start.
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(workloadContext(pw, binary)) }()
	resp, err := cli.ImageBuild(ctx, pr, build.ImageBuildOptions{
		Tags:        []string{tag, WorkloadRepo + ":latest"},
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{runner.LabelHeadroom + ".image": "workload"},
	})
	pr.CloseWithError(errors.New("build request ended"))
	if err != nil {
		return "", fmt.Errorf("build %s: %w", tag, err)
	}
	defer resp.Body.Close()
	if err := readBuildStream(resp.Body, progress); err != nil {
		return "", fmt.Errorf("build %s: %w", tag, err)
	}
	recordTagBuilt(ctx, cli, tag, progress)
	return tag, nil
}

// workloadContext writes the workload image's build context: a Dockerfile
// and a root file system holding the binary. /work and /tmp are writable
// by anyone: the workload runs as nobody. COPY keeps the modes of what it
// copies, not of the directory named, so the whole root file system is one
// directory of the context.
func workloadContext(w io.Writer, binary string) error {
	f, err := os.Open(binary)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	dockerfile := fmt.Sprintf("FROM scratch\nCOPY rootfs /\nENTRYPOINT [\"%s\"]\nCMD [\"idle\"]\n", wire.Binary)
	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		mode int64
		size int64
		data io.Reader
	}{
		{"Dockerfile", 0o644, int64(len(dockerfile)), strings.NewReader(dockerfile)},
		{"rootfs/", 0o755, 0, nil},
		{"rootfs/" + strings.TrimPrefix(wire.Binary, "/"), 0o755, st.Size(), f},
		{"rootfs/work/", 0o1777, 0, nil},
		{"rootfs/tmp/", 0o1777, 0, nil},
	} {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Size: e.size}
		if e.data == nil {
			hdr.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if e.data != nil {
			if _, err := io.Copy(tw, e.data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}
