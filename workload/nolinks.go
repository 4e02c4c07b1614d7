package workload

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLink is a path that is, or passes through, a symbolic link: what
// headroom reads from a task's container (the verifier's reward) is read
// only at the path itself. Through a link the step driver, the
// container's PID 1, would read what only PID 1 may (/proc/1/environ),
// and the engine's copy and the driver would disagree on the verdict.
var ErrLink = errors.New("is a symbolic link, or under one: headroom reads no file through a link")

// OpenNoLinks opens the absolute path p for reading without following a
// symbolic link at any point of it (ErrLink), without blocking on a FIFO,
// and refusing what is not a regular file (ErrNotRegular). A missing file
// is os.ErrNotExist.
func OpenNoLinks(p string) (*os.File, error) {
	if !path.IsAbs(p) {
		return nil, fmt.Errorf("%s: not an absolute path", p)
	}
	p = path.Clean(p)
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// A kernel before 5.6 (or a seccomp profile refusing openat2):
		// one component at a time, each checked not to be a link.
		fd, err = openWalking(p, flags)
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("%s %w", p, ErrLink)
	case errors.Is(err, unix.ENOENT):
		return nil, fmt.Errorf("%s: %w", p, os.ErrNotExist)
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, ErrNotRegular)
	}
	return f, nil
}

// ErrNotRegular is a path that is not a regular file (a directory, a
// FIFO, a device).
var ErrNotRegular = errors.New("not a regular file")

// openWalking opens p one component at a time from /, refusing a link at
// any of them (ELOOP).
func openWalking(p string, flags int) (int, error) {
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, part := range parts {
		if i == len(parts)-1 {
			fd, err := unix.Openat(dir, part, flags, 0)
			unix.Close(dir)
			return fd, err
		}
		next, err := unix.Openat(dir, part, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, unix.ELOOP
		}
		dir = next
	}
	return -1, unix.ENOENT
}
