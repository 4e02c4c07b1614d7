package taskfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/model"
)

// MaxTaskFileBytes bounds every file the loader reads (task.toml,
// task.yaml, a compose file, an env_file, instruction.md): a real one is a
// few KiB, and a parser given megabytes of nesting takes minutes.
const MaxTaskFileBytes = 1 << 20

// readTaskFile reads a file of the task directory root: it must lie in
// root once its links are resolved (root "" checks only the rest), be a
// regular file (a FIFO would never end, a device never stop) and hold at
// most MaxTaskFileBytes.
func readTaskFile(root, p string) ([]byte, error) {
	data, err := confine.ReadFile(root, p, MaxTaskFileBytes)
	var (
		nr *confine.NotRegularError
		tl *confine.TooLargeError
	)
	switch {
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s is not a regular file (%s): a task file is an ordinary file", p, nr.Mode.Type())
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%s: larger than %s, which no task file needs: headroom reads at most that much", p, model.FormatBytes(MaxTaskFileBytes))
	case errors.Is(err, confine.ErrOutside):
		return nil, outsideTask(p, err)
	}
	return data, err
}

// outsideTask words a confine error for the user: what leads out, and
// that headroom takes nothing from outside a task's directory.
func outsideTask(p string, err error) error {
	var oe *confine.OutsideError
	if errors.As(err, &oe) {
		how := "is outside the task directory"
		if oe.Link {
			how = "is a symbolic link out of the task directory"
		}
		return fmt.Errorf("%s %s %s: headroom reads and copies nothing from the host outside a task's directory; copy the file into the task", p, how, oe.Root)
	}
	return err
}

// linkedOut refuses p (a path under the task directory dir the format
// copies from: tests/, solution/, steps/<name>/solution/) when it, or a
// directory on the way to it, is a symbolic link leading out of dir,
// whether or not what the link names exists here: a link to /root, which
// headroom cannot read, made the task's solve.sh simply missing, so
// `tasks validate` said ok and `run` had no oracle. A path that is not
// there, or a link that stays in dir, is no error (the loader's own
// checks say what is missing).
func linkedOut(dir, p string) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return nil
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	cur := dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		_, err = confine.Within(dir, cur)
		if errors.Is(err, confine.ErrOutside) {
			return outsideTask(cur, err)
		}
		if err == nil {
			continue
		}
		// Not resolved here (it names nothing, or a directory headroom
		// cannot enter): where it leads is read from the link itself.
		to, rerr := os.Readlink(cur)
		if rerr != nil {
			return fmt.Errorf("%s: %w", cur, rerr)
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(cur), to)
		}
		if abs, aerr := filepath.Abs(to); aerr != nil || !strings.HasPrefix(abs+string(filepath.Separator), root+string(filepath.Separator)) {
			return outsideTask(cur, &confine.OutsideError{Path: cur, Root: dir, Link: true})
		}
		return nil
	}
	return nil
}

// inTask says whether the task directory dir has the file p (tests/test.sh,
// solution/solve.sh), refusing a directory on the way that is a link out
// of dir (linkedOut). The file itself may be a link: it is copied as one,
// and read in the container, as the harness copies it.
func inTask(dir, p string) (bool, error) {
	if err := linkedOut(dir, filepath.Dir(p)); err != nil {
		return false, err
	}
	return exists(p), nil
}

// confineTask checks every host path a task directory's task copies into
// a container or sends to the engine (build contexts and Dockerfiles,
// tests, solutions, a step's files, sidecars' files) and puts each one's
// resolved path in its place, so that nothing copied later follows a
// link that was not checked.
func confineTask(dir string, t *model.Task) error {
	in := func(p string) (string, error) {
		real, err := confine.Within(dir, p)
		if err != nil {
			return "", outsideTask(p, err)
		}
		return real, nil
	}
	build := func(b *model.Build) (*model.Build, error) {
		if b == nil {
			return nil, nil
		}
		c := *b
		var err error
		if c.Context, err = in(b.Context); err != nil {
			return nil, err
		}
		if c.Inline == "" {
			if _, err := confine.Within(c.Context, filepath.Join(c.Context, c.Dockerfile)); err != nil {
				return nil, outsideTask(filepath.Join(b.Context, b.Dockerfile), err)
			}
		}
		return &c, nil
	}
	files := func(ups []model.Upload) ([]model.Upload, error) {
		if ups == nil {
			return nil, nil
		}
		out := make([]model.Upload, len(ups))
		for i, u := range ups {
			if u.From != "" {
				var err error
				if u.From, err = in(u.From); err != nil {
					return nil, err
				}
				if err := noSpecialFiles(u.From); err != nil {
					return nil, err
				}
			}
			out[i] = u
		}
		return out, nil
	}
	step := func(st *model.Step) error {
		f, err := files(st.Files)
		st.Files = f
		return err
	}
	var err error
	if t.Build, err = build(t.Build); err != nil {
		return err
	}
	if err := step(&t.Verifier); err != nil {
		return err
	}
	t.Sidecars = append([]model.Sidecar(nil), t.Sidecars...)
	for i := range t.Sidecars {
		sc := &t.Sidecars[i]
		if sc.Build, err = build(sc.Build); err != nil {
			return err
		}
		if sc.Files, err = files(sc.Files); err != nil {
			return err
		}
	}
	for i := range t.Phases {
		p := &t.Phases[i]
		if err := step(&p.Verifier); err != nil {
			return err
		}
		for j := range p.Setup {
			if err := step(&p.Setup[j]); err != nil {
				return err
			}
		}
	}
	t.Agents = append([]model.Agent(nil), t.Agents...)
	for i := range t.Agents {
		t.Agents[i].Steps = append([]model.Step(nil), t.Agents[i].Steps...)
		for j := range t.Agents[i].Steps {
			if err := step(&t.Agents[i].Steps[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// noSpecialFiles refuses a FIFO, socket or device among the files a step
// copies into its container (the tree at p): they are no task content,
// and the copy left them out, so a solution/solve.sh made a FIFO was
// "No such file or directory" in the trial while validate said ok (the
// thirty-fourth attacker's 6), where the same at task.toml is refused.
func noSpecialFiles(p string) error {
	return filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if t := d.Type(); t&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0 {
			return fmt.Errorf("%s is not a regular file (%s): a task's files are ordinary files, directories and links; remove it", q, t)
		}
		return nil
	})
}
