package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/headroom-eval/headroom/model"
)

// A task's storage (Harbor's storage_mb) is the size of its container's
// own file system. The engine holds a container to a size
// (HostConfig.StorageOpt "size") only on some storage drivers: overlay2
// on xfs mounted with pquota, btrfs, zfs, devicemapper, Windows'. Elsewhere
// (fuse-overlayfs, overlay2 on ext4, vfs) nothing bounds what a trial
// writes: the record then keeps what it wrote, and says when that was
// more than its spec (model.DiskUse).

// sizingDrivers are the storage drivers that may hold a container to a
// size; overlay2 only on xfs, and even then only with pquota, which the
// engine does not say: its refusal is learnt (Backend.storageRefused).
var sizingDrivers = map[string]bool{"overlay2": true, "btrfs": true, "zfs": true, "devicemapper": true, "windowsfilter": true}

// diskSizeWait bounds the end's read of what the container wrote: the
// engine walks the container's layer to count it.
const diskSizeWait = 10 * time.Second

// engineLookWait bounds the plain inspect before it: an engine that does
// not answer that is not asked to count.
const engineLookWait = 3 * time.Second

// backingFilesystem is the storage driver's backing file system, as the
// engine's info says it ("xfs", "extfs"), or "".
func backingFilesystem(status [][2]string) string {
	for _, kv := range status {
		if kv[0] == "Backing Filesystem" {
			return kv[1]
		}
	}
	return ""
}

// NotAppliedStorage is why a trial's storage was not bounded when the
// run did not ask for it: Harbor's Docker environment never bounds it.
const NotAppliedStorage = "not applied, as under Harbor's Docker environment (run --apply-storage to bound it where the engine can)"

// storageBound is the size a trial's container is to be held to (the
// task's storage), or 0 and why it is not.
func (b *Backend) storageBound(task model.Task) (int64, string) {
	if task.StorageBytes <= 0 {
		return 0, ""
	}
	if !b.opts.ApplyStorage {
		return 0, NotAppliedStorage
	}
	return storageBound(task.StorageBytes, b.opts.StorageDriver, b.opts.BackingFilesystem, b.storageRefused.Load())
}

func storageBound(spec int64, driver, backing string, refused *string) (int64, string) {
	switch {
	case refused != nil:
		return 0, "the engine refused to size a container: " + *refused
	case driver == "":
		return 0, "the engine's storage driver is unknown"
	case !sizingDrivers[driver]:
		return 0, fmt.Sprintf("the %s storage driver cannot size a container", driver)
	case driver == "overlay2" && backing != "" && backing != "xfs":
		return 0, fmt.Sprintf("the overlay2 storage driver sizes a container only on xfs (with pquota), not on %s", backing)
	}
	return spec, ""
}

// sizeContainer asks the engine to hold the container to the task's
// storage where it can, and returns what the record is to say of it.
func (b *Backend) sizeContainer(hc *container.HostConfig, task model.Task) model.DiskUse {
	d := model.DiskUse{SpecBytes: task.StorageBytes}
	d.BoundBytes, d.Unbounded = b.storageBound(task)
	if d.BoundBytes > 0 {
		hc.StorageOpt = map[string]string{"size": strconv.FormatInt(d.BoundBytes, 10)}
	}
	return d
}

// storageOptRefused says whether the engine refused a create for its
// storage option ("--storage-opt is not supported", "--storage-opt is
// supported only for overlay over xfs with 'pquota' mount option").
func storageOptRefused(err error) bool {
	return err != nil && strings.Contains(err.Error(), "storage-opt")
}

// refuseStorage remembers the engine's refusal of a container size: later
// trials are created without one, and their records say why.
func (b *Backend) refuseStorage(err error) {
	why := err.Error()
	if i := strings.Index(why, "--storage-opt"); i >= 0 {
		why = why[i:]
	}
	b.storageRefused.Store(&why)
}

// diskWritten reads what the container wrote to its own file system into
// the trial's DiskUse: counted in its layer's upper directory where this
// host can read it (a local engine, headroom as root: milliseconds, as
// only the written files are walked), else the engine's SizeRw (which
// fuse-overlayfs computes by comparing the whole file system with its
// image's: 5-9 s at a load of 20 here), each within diskSizeWait.
func (s *sandbox) diskWritten(ctx context.Context) *model.DiskUse {
	d := s.disk
	ctx, cancel := context.WithTimeout(ctx, diskSizeWait)
	defer cancel()
	// An engine that does not answer this (gone, restarting) is not asked
	// to count: the removal after it needs the time.
	look, cancelLook := context.WithTimeout(ctx, engineLookWait)
	info, err := s.b.cli.ContainerInspect(look, s.id)
	cancelLook()
	if err != nil {
		d.Unread = "the engine did not say: " + err.Error()
		return &d
	}
	if upper := info.GraphDriver.Data["UpperDir"]; upper != "" {
		n, err := layerBytes(ctx, upper)
		// What it wrote at its harness's mounts is the task's writing too
		// (a directory of the container's before they were volumes),
		// counted where its layer is.
		for _, m := range info.Mounts {
			if err == nil && m.Type == mount.TypeVolume && slices.Contains(s.logs, m.Name) {
				k, verr := layerBytes(ctx, m.Source)
				n += k
				if errors.Is(verr, context.DeadlineExceeded) {
					err = verr
				}
			}
		}
		switch {
		case err == nil:
			d.WrittenBytes = n
			return &d
		case errors.Is(err, context.DeadlineExceeded):
			d.WrittenBytes = n
			d.Unread = fmt.Sprintf("at least: more files than could be counted within %s", diskSizeWait)
			return &d
		}
	}
	sized, _, err := s.b.cli.ContainerInspectWithRaw(ctx, s.id, true)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		d.Unread = fmt.Sprintf("the engine did not count the container's layer within %s", diskSizeWait)
	case err != nil:
		d.Unread = "the engine did not say: " + err.Error()
	case sized.SizeRw == nil:
		d.Unread = "the engine did not count the container's layer"
	default:
		d.WrittenBytes = *sized.SizeRw
	}
	return &d
}

// layerBytes sums the sizes of what a layer's directory holds, as the
// engine's SizeRw does (every entry but directories, a hard link once),
// a file at most what it takes on the disk (a sparse one's blocks, not
// its length), until ctx ends: then the sum so far and ctx's error.
func layerBytes(ctx context.Context, dir string) (int64, error) {
	if _, err := os.Lstat(dir); err != nil {
		return 0, err
	}
	var n int64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone or unreadable: the engine skips it too
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		size := info.Size()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			if st.Nlink > 1 {
				if seen[st.Ino] {
					return nil
				}
				seen[st.Ino] = true
			}
			// A sparse file counts what it holds on the disk, not its
			// length: `truncate -s 4T` wrote nothing, and read as a
			// trial that wrote 8.9TiB past its storage_mb (the
			// twenty-first attacker's 5).
			size = min(size, st.Blocks*512)
		}
		n += size
		return nil
	})
	return n, err
}
