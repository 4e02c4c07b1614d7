package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// LockFile, in an experiment directory, names the one process writing
// the experiment. The lock itself is held (flock) on the directory: a
// file can be deleted from under its lock, and a second writer would
// then lock a new one; the directory cannot be replaced while it holds
// the experiment's files without the writer seeing it (checkDir).
const LockFile = "lock"

// Lock is a held experiment lock. The kernel drops it when its holder
// dies, however it dies: a stale lock cannot outlive a crash.
type Lock struct{ dir, f *os.File }

// LockedError is a second writer refused: the experiment's lock is held.
type LockedError struct {
	Dir string
	// Holder is what the holder wrote: its pid, command and start time.
	Holder string
}

func (e *LockedError) Error() string {
	who := e.Holder
	if who == "" {
		who = "a process that has not said who it is (its lock file was removed or replaced, or it has not written it yet)"
	}
	return fmt.Sprintf("experiment %s is being written by %s; an experiment has one writer at a time: wait for that run to end (or stop it), then resume", e.Dir, who)
}

// LockExperiment takes dir's lock, or says who holds it. The lock is
// released by Unlock, or by the holder's death.
func LockExperiment(dir string) (*Lock, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", dir, err)
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := lockHolder(d)
			d.Close()
			return nil, &LockedError{Dir: dir, Holder: holder}
		}
		d.Close()
		return nil, fmt.Errorf("experiment %s: lock: %w", dir, err)
	}
	// Who holds it, for a second writer to name (a file: the lock is on
	// the directory, whatever happens to this). Made afresh, never opened
	// where it is: what is at the name may be a hard link to someone
	// else's file (O_NOFOLLOW refuses only symbolic links), and truncating
	// it would empty that file; unlinking the name leaves it whole.
	f, err := createAt(d, LockFile, true, 0)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("experiment %s: %w", dir, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(Holder()+"\n"), 0)
	return &Lock{dir: d, f: f}, nil
}

// lockHolder reads who holds the lock from the lock file in d: only a
// file that is nowhere else (one link), not through a link, as the
// holder made it; anything else may be another file's text, and is not
// shown.
func lockHolder(d *os.File) string {
	fd, err := unix.Openat(int(d.Fd()), LockFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	f := os.NewFile(uintptr(fd), atPath(d, LockFile))
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	return strings.TrimSpace(string(b))
}

// Holder is how this process names itself in a lock: pid, command and
// start time.
func Holder() string {
	return fmt.Sprintf("pid %d (%s), started %s", os.Getpid(), strings.Join(os.Args, " "), processStart.Format(time.RFC3339))
}

var processStart = time.Now()

// Unlock releases the lock (the file stays, emptied: no holder named
// while none holds it).
func (l *Lock) Unlock() {
	if l == nil || l.dir == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = l.f.Close()
	_ = l.dir.Close()
	l.f, l.dir = nil, nil
}

// identity is a directory's device and inode: what stays when it is
// renamed, and changes when it is removed and made again.
type identity struct{ dev, ino uint64 }

// lidentify is identify of path itself: a link's own, not its target's.
func lidentify(path string) (identity, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return identity{}, err
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return identity{}, fmt.Errorf("%s is a symbolic link: an experiment writes only into its own directories", path)
	}
	return identity{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// checkFiles fails, once and for good, when what the experiment writes
// through a path is no longer at it: its trials file renamed or replaced
// (the records would go on into the renamed file, and the experiment
// read as having none), or its trials directory replaced (by a link, the
// traces would be written wherever it points). Nothing more is written.
func (e *Experiment) checkFiles() error {
	if e.replaced != nil {
		return e.replaced
	}
	why := ""
	if e.trials != nil {
		var held, at syscall.Stat_t
		p := filepath.Join(e.Dir, TrialsFile)
		if syscall.Fstat(int(e.trials.Fd()), &held) == nil {
			if err := syscall.Lstat(p, &at); err != nil || at.Dev != held.Dev || at.Ino != held.Ino {
				now, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(e.trials.Fd())))
				why = fmt.Sprintf("%s was renamed or replaced while the sweep ran (the records written so far are in %s)", p, now)
			}
		}
	}
	if why == "" && e.trials != nil {
		if st, err := e.trials.Stat(); err == nil {
			if err := e.checkSize(st.Size()); err != nil {
				return err
			}
		}
	}
	if tdir := filepath.Join(e.Dir, TrialsDir); why == "" {
		if id, err := lidentify(tdir); err != nil || id != e.trialsDir {
			what := "another directory"
			if err != nil {
				what = err.Error()
			}
			why = fmt.Sprintf("%s was replaced while the sweep ran (%s): traces are written only into the directory the experiment made", tdir, what)
		}
	}
	if why == "" {
		return nil
	}
	e.replaced = fmt.Errorf("%s; nothing more was written and the sweep was stopped: put it back, then resume", why)
	return e.replaced
}

// checkSize fails, once and for good, when trials.jsonl (size bytes
// now; -1 not known) is not the size the records written to it made:
// cut (truncated: records lost from it) or written by another. Nothing
// more is written: appended past a cut, the records would sit at
// offsets that are not theirs, and the sweep would say it kept what it
// lost.
func (e *Experiment) checkSize(size int64) error {
	if e.replaced != nil {
		return e.replaced
	}
	if size < 0 || size == e.written {
		return nil
	}
	p := filepath.Join(e.Dir, TrialsFile)
	what := fmt.Sprintf("was cut to %d bytes while the sweep ran: headroom had written %d bytes of records to it (%d record(s)): records were lost from it", size, e.written, e.nextLine-1)
	if size > e.written {
		what = fmt.Sprintf("grew to %d bytes while the sweep ran, though headroom had written %d: something else wrote to it", size, e.written)
	}
	e.replaced = fmt.Errorf("%s %s; nothing more was written and the sweep was stopped: resume runs again every planned trial without a record", p, what)
	return e.replaced
}

func identify(path string) (identity, error) {
	st, err := os.Stat(path)
	if err != nil {
		return identity{}, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return identity{}, nil
	}
	return identity{dev: uint64(sys.Dev), ino: sys.Ino}, nil
}

// DirGoneError says the experiment directory was removed or moved while
// the experiment was written, and where its records went.
type DirGoneError struct {
	Dir string
	// MovedTo is where the directory is now, if it was moved (its
	// records are there); empty if it was removed.
	MovedTo string
	// Rescued is where the records of a removed directory were saved
	// (read back from the file headroom still held open), if any were.
	Rescued string
	// Records is how many records the directory held.
	Records int
}

func (e *DirGoneError) Error() string {
	if e.MovedTo != "" {
		return fmt.Sprintf("the experiment directory %s was moved to %s while the sweep ran: its %d record(s) are there, nothing more was written; the sweep was stopped", e.Dir, e.MovedTo, e.Records)
	}
	switch {
	case e.Rescued != "":
		return fmt.Sprintf("the experiment directory %s was removed while the sweep ran: its %d record(s) and its manifest were saved to %s (its traces went with it; nothing was re-created at %s); the sweep was stopped", e.Dir, e.Records, e.Rescued, e.Dir)
	case e.Records > 0:
		return fmt.Sprintf("the experiment directory %s was removed while the sweep ran, with its %d record(s) (they could not be saved elsewhere); nothing was re-created; the sweep was stopped", e.Dir, e.Records)
	}
	return fmt.Sprintf("the experiment directory %s was removed while the sweep ran (it held no record yet); nothing was re-created; the sweep was stopped", e.Dir)
}

// Short is the error in a line a screen can hold: what happened to the
// directory and where its records are, without the paths said twice.
func (e *DirGoneError) Short() string {
	switch {
	case e.MovedTo != "":
		return fmt.Sprintf("the experiment directory was moved to %s: its %d record(s) are there", e.MovedTo, e.Records)
	case e.Rescued != "":
		return fmt.Sprintf("the experiment directory was removed: its %d record(s) were saved to %s", e.Records, e.Rescued)
	case e.Records > 0:
		return fmt.Sprintf("the experiment directory was removed, with its %d record(s) (they could not be saved elsewhere)", e.Records)
	}
	return "the experiment directory was removed (it held no record yet)"
}

// checkDir fails, once and for good, when the directory at e.Dir is not
// the one this experiment made or opened (removed, moved, replaced), or
// its trials file was unlinked: then nothing more is written, anywhere,
// and the error says where the records went.
func (e *Experiment) checkDir() error {
	if e.gone != nil {
		return e.gone
	}
	cur, err := identify(e.Dir)
	unlinked := false
	var st syscall.Stat_t
	if e.trials != nil && syscall.Fstat(int(e.trials.Fd()), &st) == nil && st.Nlink == 0 {
		unlinked = true
	}
	if err == nil && cur == e.id && !unlinked {
		return nil
	}
	g := &DirGoneError{Dir: e.Dir}
	if at, ok := e.whereNow(); ok && !unlinked {
		g.MovedTo = at
	}
	var b []byte
	if e.trials != nil {
		// The file is still open: its records can be read back whether
		// it was moved or unlinked.
		b, _ = os.ReadFile("/proc/self/fd/" + strconv.Itoa(int(e.trials.Fd())))
	}
	g.Records = strings.Count(string(b), "\n")
	if g.MovedTo == "" && g.Records > 0 {
		g.Rescued = rescue(e.Dir, e.manifest, b)
	}
	e.gone = g
	return g
}

// writeNew makes name in the directory dir with data, afresh.
func writeNew(dir, name string, data []byte) error {
	d, err := openDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	f, err := createAt(d, name, false, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// whereNow is where the experiment's directory is now, if it still is
// somewhere: the kernel's name for the handle held on it.
func (e *Experiment) whereNow() (string, bool) {
	if e.dirf == nil {
		return "", false
	}
	at, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(e.dirf.Fd())))
	if err != nil || strings.HasSuffix(at, " (deleted)") || at == e.Dir {
		return "", false
	}
	if abs, err := filepath.Abs(e.Dir); err == nil && abs == at {
		return "", false // same path, yet another directory: this one is gone
	}
	return at, true
}

// rescue saves a removed experiment's manifest and records as an
// experiment directory of their own beside where it was (or, if that is
// gone too, in the temporary directory), never at its path: report and
// resume read it as any other. The traces went with the directory.
func rescue(dir string, m Manifest, records []byte) string {
	name := filepath.Base(dir) + ".rescued"
	m.Status = "interrupted"
	for _, d := range []string{filepath.Dir(dir), os.TempDir()} {
		p := filepath.Join(d, name)
		if os.Mkdir(p, 0o700) != nil {
			continue
		}
		e := &Experiment{Dir: p, manifest: m}
		err := e.writeManifest()
		if err == nil {
			err = writeNew(p, TrialsFile, records)
		}
		if err == nil {
			return p
		}
		os.RemoveAll(p)
	}
	return ""
}
