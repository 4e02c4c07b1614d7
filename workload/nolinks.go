package workload

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLink is a path that is, or passes through, a symbolic link headroom
// does not follow: what it reads from a task's container (the verifier's
// reward) is read at the path itself, or (OpenInDir) through relative
// links that stay in its directory. Through any other link the step
// driver, the container's PID 1, would read what only PID 1 may
// (/proc/1/environ), and the engine's copy and the driver would disagree
// on the verdict.
var ErrLink = errors.New("is a symbolic link, or under one, that leaves its directory: headroom follows only a relative link to a file beside it")

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
	defer unix.Close(dir)
	return openWalkingAt(dir, strings.TrimPrefix(p, "/"), flags)
}

// openWalkingAt opens rel under the directory dir one component at a
// time, refusing a link at any of them (ELOOP); dir stays open.
func openWalkingAt(dir int, rel string, flags int) (int, error) {
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		if i == len(parts)-1 {
			fd, err := unix.Openat(dir, part, flags, 0)
			if i > 0 {
				unix.Close(dir)
			}
			return fd, err
		}
		next, err := unix.Openat(dir, part, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if i > 0 {
			unix.Close(dir)
		}
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

// OpenInDir opens the absolute path p for reading, without blocking on a
// FIFO, refusing what is not a regular file (ErrNotRegular); a missing
// file is os.ErrNotExist. No link is followed but at p itself, and
// there only one that stays in p's directory: Harbor reads a
// verifier's reward from its bind mount with Python, following links, so
// a reward.txt that links to real.txt beside it is read there. The
// directory is reached without a link (ErrLink); from it, each link is
// followed only when it is relative and neither it nor any later hop
// leaves the directory, not even to come back (openat2's
// RESOLVE_BENEATH): an absolute link, a `..` above the directory, a
// magic link of /proc, or more than 40 hops is ErrLink. The driver is
// the container's PID 1 and root, so a link out of the directory could
// read what only it may (/proc/1/environ); one inside it reads nothing
// the verifier could not have written there itself.
func OpenInDir(p string) (*os.File, error) { return openInDir(p, false) }

// openInDir is OpenInDir; walk resolves and opens as where openat2 is
// missing.
func openInDir(p string, walk bool) (*os.File, error) {
	if !path.IsAbs(p) {
		return nil, fmt.Errorf("%s: not an absolute path", p)
	}
	p = path.Clean(p)
	dirPath, name := path.Dir(p), path.Base(p)
	if name == "/" || name == "." || name == ".." {
		return nil, fmt.Errorf("%s: %w", p, ErrNotRegular)
	}
	const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
	dir, err := -1, error(unix.ENOSYS)
	if !walk {
		dir, err = unix.Openat2(unix.AT_FDCWD, dirPath, &unix.OpenHow{Flags: dirFlags, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		walk = errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)
	}
	if walk {
		dir, err = openWalking(dirPath, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		var st unix.Stat_t
		if err == nil {
			if err = unix.Fstat(dir, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP
			} else if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				err = unix.ENOTDIR
			}
			if err != nil {
				unix.Close(dir)
			}
		}
	}
	if err != nil {
		return nil, openErr(p, err)
	}
	defer unix.Close(dir)
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC
	var fd int
	if !walk {
		fd, err = unix.Openat2(dir, name, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS})
		walk = errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)
	}
	if walk {
		// A kernel before 5.6: the links resolved here, hop by hop, then
		// the result opened one component at a time with no link
		// followed, so a link swapped in between is refused, not taken.
		var rel string
		rel, err = ResolveInDir(name, func(rel string) (string, bool, error) { return readlinkAt(dir, rel) })
		if err == nil {
			fd, err = openWalkingAt(dir, rel, flags|unix.O_NOFOLLOW)
		}
	}
	if err != nil {
		return nil, openErr(p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, ErrNotRegular)
	}
	return f, nil
}

// openErr is an open's error in OpenInDir's words.
func openErr(p string, err error) error {
	switch {
	case errors.Is(err, ErrLink):
		return err
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%s %w", p, ErrLink)
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	return &os.PathError{Op: "open", Path: p, Err: err}
}

// readlinkAt is rel's link target under dir, or isLink false.
func readlinkAt(dir int, rel string) (string, bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, rel, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", false, nil
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, rel, buf)
	if err != nil {
		return "", false, err
	}
	return string(buf[:n]), true, nil
}

// MaxLinkHops is the most links ResolveInDir follows for one path, the
// kernel's own bound (MAXSYMLINKS).
const MaxLinkHops = 40

// ResolveInDir resolves rel, a path relative to a directory, by
// RESOLVE_BENEATH's rule: readlink says whether a path (relative to the
// same directory, its parents already resolved) is a link, and to what.
// The result has no link in it, or the error is ErrLink (a link that is
// absolute, a `..` above the directory, more than MaxLinkHops links) or
// readlink's own (a missing component). Both the step driver, where
// openat2 is missing, and the engine's copy (--exec-steps) read a reward
// by it, so the two follow the same links.
func ResolveInDir(rel string, readlink func(rel string) (target string, isLink bool, err error)) (string, error) {
	var done []string
	todo := strings.Split(rel, "/")
	hops, via := 0, rel
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", fmt.Errorf("(%s) %w", via, ErrLink)
			}
			done = done[:len(done)-1]
			continue
		}
		cur := strings.Join(append(done, part), "/")
		target, isLink, err := readlink(cur)
		if err != nil {
			return "", err
		}
		if !isLink {
			done = append(done, part)
			continue
		}
		via = cur + " → " + target
		if hops++; hops > MaxLinkHops {
			return "", fmt.Errorf("(%s, more than %d links) %w", via, MaxLinkHops, ErrLink)
		}
		if path.IsAbs(target) || target == "" {
			return "", fmt.Errorf("(%s, not relative) %w", via, ErrLink)
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}
