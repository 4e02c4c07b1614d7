// Package confine keeps the host paths headroom reads for a task inside
// the task's directory, whatever symbolic links lie on the way, and the
// paths it writes from a container inside the directory it writes to.
package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is what an OutsideError matches with errors.Is.
var ErrOutside = errors.New("outside its directory")

// OutsideError says a path leads out of the directory it must stay in.
type OutsideError struct {
	Path, Root string
	// Link says a symbolic link (not a ../ or an absolute path) leads out.
	Link bool
}

func (e *OutsideError) Error() string {
	how := "is outside"
	if e.Link {
		how = "is a symbolic link (or lies under one) that leads outside"
	}
	return fmt.Sprintf("%s %s %s", e.Path, how, e.Root)
}

// Is makes errors.Is(err, ErrOutside) true.
func (e *OutsideError) Is(target error) bool { return target == ErrOutside }

// Within resolves every symbolic link in p and returns the real path if
// it lies in root (itself resolved), else an *OutsideError. A path that
// does not exist is an error of its own (fs.ErrNotExist). What Within
// returns has no link left to follow, so reading it reads what was
// checked (a link made after the check is a race the task directory's
// owner would have to run against themselves).
func Within(root, p string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	absRoot, _ := filepath.Abs(root)
	if !inside(absRoot, abs) && !inside(realRoot, abs) {
		return "", &OutsideError{Path: p, Root: root}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	if !inside(realRoot, real) {
		return "", &OutsideError{Path: p, Root: root, Link: true}
	}
	return real, nil
}

// inside says whether p is root or lies under it (both clean, absolute).
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Join is where an archive entry named name is written under dir: name
// must be relative and stay under dir once joined, and no directory on
// the way that exists may be a symbolic link leading out of dir (an
// archive from a container could plant one, then write through it). The
// entry itself, if it exists as a link, is not followed: the caller
// replaces it (remove, then create).
func Join(dir, name string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(name))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", &OutsideError{Path: name, Root: dir}
	}
	p := filepath.Join(dir, clean)
	parent := filepath.Dir(p)
	// The deepest existing directory on the way decides.
	for probe := parent; ; probe = filepath.Dir(probe) {
		if _, err := os.Lstat(probe); err == nil {
			if _, err := Within(dir, probe); err != nil {
				if errors.Is(err, ErrOutside) {
					return "", &OutsideError{Path: name, Root: dir, Link: true}
				}
				return "", err
			}
			break
		}
		if probe == dir || probe == filepath.Dir(probe) {
			break
		}
	}
	return p, nil
}
