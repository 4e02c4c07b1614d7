package runner

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Uploads go into a sandbox as one tar stream, whichever backend copies
// it in (the engine's CopyToContainer, a pod's exec of tar).

// WriteUploads writes the uploads as one tar stream rooted at "/", with
// every parent directory, owned by root, modes kept.
func WriteUploads(w io.Writer, uploads []model.Upload) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	now := time.Now()
	// A directory of the task's keeps its time, as a file does (and as
	// `docker cp` keeps both); one headroom makes is dated now. Before,
	// every directory copied in was dated 1970 (the eleventh attacker's
	// 17).
	addDirAt := func(p string, mode int64, at time.Time) error {
		p = strings.TrimPrefix(path.Clean("/"+p), "/")
		if p == "" || dirs[p] {
			return nil
		}
		dirs[p] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, ModTime: at})
	}
	addDir := func(p string, mode int64) error { return addDirAt(p, mode, now) }
	parents := func(p string) error {
		var acc string
		for _, part := range strings.Split(strings.Trim(path.Dir(path.Clean("/"+p)), "/"), "/") {
			if part == "" {
				continue
			}
			acc = path.Join(acc, part)
			if err := addDir(acc, 0o755); err != nil {
				return err
			}
		}
		return nil
	}
	for _, u := range uploads {
		to := path.Clean("/" + u.To)
		if err := parents(to); err != nil {
			return err
		}
		if u.Link != "" {
			// A link as the sandbox it came from had it: written into
			// the archive, never made or followed on the host.
			if err := addDir(to, 0o755); err != nil {
				return err
			}
			hdr := &tar.Header{Typeflag: tar.TypeSymlink, Name: strings.TrimPrefix(path.Join(to, u.Name), "/"), Linkname: u.Link, Mode: 0o777, ModTime: now}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		if u.From == "" && u.Name != "" {
			if err := addDir(to, 0o755); err != nil {
				return err
			}
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(path.Join(to, u.Name), "/"), Mode: uploadMode(u), Size: int64(len(u.Content))}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := io.WriteString(tw, u.Content); err != nil {
				return err
			}
			continue
		}
		if u.From == "" {
			if err := addDir(to, 0o777); err != nil {
				return err
			}
			continue
		}
		// Not followed: the loader resolved every path it checked
		// (confine.Within), so a link here was made since, or never
		// checked, and could lead anywhere on the host.
		st, err := os.Lstat(u.From)
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: headroom copies in only paths it resolved and checked when it loaded the task; load the task again: %w", u.From, ErrTaskFilesChanged)
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				// A FIFO, socket or device put in a single file's place
				// since the load, which refuses one.
				return notTaskContent(u.From, st.Mode())
			}
			if err := addDir(to, 0o755); err != nil {
				return err
			}
			name := filepath.Base(u.From)
			if u.Name != "" {
				name = u.Name // a file copied in under another name
			}
			if err := TarEntry(tw, u.From, path.Join(to, name), st); err != nil {
				return err
			}
			continue
		}
		dir := func(name string, info fs.FileInfo) error {
			return addDirAt(name, tarMode(info.Mode()), info.ModTime())
		}
		if err := TarTree(tw, u.From, to, dir); err != nil {
			return err
		}
	}
	return tw.Close()
}

// TarTree writes the tree at src into tw under prefix ("" for the root
// of the archive), root-owned, modes and times kept. Directories go
// through dir, so a caller can write each once. A FIFO, socket or device
// is no task content, and the loader refuses one: one here was made
// since, and is an error (left out, a solve.sh made a FIFO was "No such
// file or directory" in the trial).
func TarTree(tw *tar.Writer, src, prefix string, dir func(name string, info fs.FileInfo) error) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		name := path.Join(prefix, filepath.ToSlash(rel))
		info, err := d.Info()
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return dir(name, info)
		case info.Mode().IsRegular(), info.Mode()&fs.ModeSymlink != 0:
			return TarEntry(tw, p, name, info)
		}
		return notTaskContent(p, info.Mode())
	})
}

// TarEntry writes one file, symlink or directory from src as name,
// root-owned; a regular file's content follows its header.
func TarEntry(tw *tar.Writer, src, name string, info fs.FileInfo) error {
	link := ""
	if info.Mode()&fs.ModeSymlink != 0 {
		var err error
		if link, err = os.Readlink(src); err != nil {
			return err
		}
	}
	hdr, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	hdr.Name = strings.TrimPrefix(name, "/")
	hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.CopyN(tw, f, info.Size())
	return err
}

// tarMode is a mode as a tar header holds it, as tar.FileInfoHeader
// (and `docker cp`) write it: the permissions with the setuid, setgid
// and sticky bits. A directory's were its permissions alone: a task's
// sticky scratch directory (1777, as /tmp is) arrived 0777, and a test
// that checks it fails where Harbor's copy keeps it (the twelfth
// attacker's 8).
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

// uploadMode is the mode of a file written from an upload's Content.
func uploadMode(u model.Upload) int64 {
	if u.Executable {
		return 0o755
	}
	return 0o644
}

// notTaskContent is the error of a FIFO, socket or device found among a
// step's files at copy time: the loader refuses one, so it was made since.
func notTaskContent(p string, mode fs.FileMode) error {
	return fmt.Errorf("%s is not a regular file (%s): load the task again: %w", p, mode.Type(), ErrTaskFilesChanged)
}
