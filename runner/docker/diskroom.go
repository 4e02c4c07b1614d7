package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/docker/docker/api/types/mount"

	"github.com/headroom-eval/headroom/model"
)

// pseudoFS are filesystems with no room to run out of.
var pseudoFS = map[string]bool{"proc": true, "sysfs": true, "cgroup": true, "cgroup2": true, "devpts": true, "mqueue": true,
	"securityfs": true, "debugfs": true, "tracefs": true, "bpf": true, "pstore": true, "configfs": true, "fusectl": true, "nsfs": true}

// DiskRoom reads the room of every filesystem the container has mounted
// (its writable layer, tmpfs mounts, volumes), from this host: statfs
// through the container's first process's root (/proc/PID/root), so the
// numbers are the kernel's, not anything the task prints
// (runner.DiskWitness). A remote engine's containers cannot be read.
func (s *sandbox) DiskRoom(ctx context.Context) ([]model.FSRoom, error) {
	if s.cg == nil {
		return nil, errors.New("the container's filesystems cannot be read here")
	}
	info, err := s.b.cli.ContainerInspect(ctx, s.id)
	if err != nil || info.State == nil || info.State.Pid == 0 {
		return nil, fmt.Errorf("the container's first process: %v", err)
	}
	// What the machine gives as disk at a mount point: the engine's
	// volumes and bind mounts, and the scratch tmpfs the operator gave
	// every trial (Options.Tmpfs). Any other tmpfs is the container's own.
	given := map[string]bool{}
	for _, m := range info.Mounts {
		if m.Type == mount.TypeBind || m.Type == mount.TypeVolume {
			given[filepath.Clean(m.Destination)] = true
		}
	}
	for p := range s.b.opts.Tmpfs {
		given[filepath.Clean(p)] = true
	}
	proc := filepath.Join("/proc", strconv.Itoa(info.State.Pid))
	f, err := os.Open(filepath.Join(proc, "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rooms []model.FSRoom
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		mp, fstype, ok := mountOf(sc.Text())
		// The engine's masks over /proc and /sys and its single-file
		// mounts (/etc/hosts) are no room a step writes to.
		if !ok || pseudoFS[fstype] || seen[mp] || mp == "/proc" || mp == "/sys" || strings.HasPrefix(mp, "/proc/") || strings.HasPrefix(mp, "/sys/") {
			continue
		}
		seen[mp] = true
		at := filepath.Join(proc, "root", mp)
		if fi, err := os.Stat(at); err != nil || !fi.IsDir() {
			continue
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(at, &st); err != nil || st.Blocks == 0 {
			continue
		}
		bs := int64(st.Bsize)
		rooms = append(rooms, model.FSRoom{Path: mp, Type: fstype, Size: int64(st.Blocks) * bs, Free: int64(st.Bavail) * bs, // what an unprivileged step may still write: ext4 keeps 5% for root
			Files: int64(st.Files), FreeFiles: int64(st.Ffree), Own: ownTmpfs(mp, fstype, given)})
	}
	if len(rooms) == 0 {
		return nil, errors.New("no filesystem of the container could be read")
	}
	return rooms, sc.Err()
}

// ownTmpfs says whether the filesystem at mp is the container's own
// fixed-size tmpfs (model.FSRoom.Own): held in memory, not on the host's
// disk — the engine's /dev and /dev/shm (64 MiB at every ratio), or one
// the task mounted — and not a mount the machine gives as disk (given:
// a volume, a bind mount, the operator's scratch tmpfs). The writable
// layer (/, overlay) is never own.
func ownTmpfs(mp, fstype string, given map[string]bool) bool {
	if fstype != "tmpfs" && fstype != "ramfs" {
		return false
	}
	return !given[filepath.Clean(mp)]
}

// mountOf reads a mountinfo line's mount point (unescaped) and type.
func mountOf(line string) (mp, fstype string, ok bool) {
	f := strings.Fields(line)
	sep := -1
	for i, w := range f {
		if w == "-" && i >= 6 {
			sep = i
			break
		}
	}
	if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
		return "", "", false
	}
	return unescapeMount(f[4]), f[sep+1], true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
