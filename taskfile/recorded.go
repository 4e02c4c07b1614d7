package taskfile

import (
	"errors"
	"os"
	"path"
	"path/filepath"
)

// ErrNoRecordedTaskDir is FindRecordedTaskDir's answer when no candidate
// directory exists.
var ErrNoRecordedTaskDir = errors.New("no such directory here")

// FindRecordedTaskDir finds the task directory a Harbor job's trial ran
// from, for import and replay alike: its config.task.path p as written,
// or, relative, from the directory Harbor ran in (the job's grandparent:
// Harbor writes jobs/<job> there), from the job directory and from its
// parent. A directory counts only when the task it loads is the trial's
// named name (its [task] name, the name's last part, or the directory's
// own; "" takes any): another task under that path is not the one run.
// With none found, the error is the first candidate's load error, a
// wrong name's, or ErrNoRecordedTaskDir.
func FindRecordedTaskDir(job, p, name string) (string, Loaded, error) {
	if p == "" {
		return "", Loaded{}, ErrNoRecordedTaskDir
	}
	cands := []string{p}
	if !filepath.IsAbs(p) {
		cands = append(cands, filepath.Join(filepath.Dir(filepath.Dir(job)), p), filepath.Join(job, p), filepath.Join(filepath.Dir(job), p))
	}
	var first error
	for _, dir := range cands {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		l, err := LoadTaskDir(dir)
		switch {
		case err != nil:
		case name == "" || l.Task.Name == name || path.Base(l.Task.Name) == name || filepath.Base(filepath.Clean(dir)) == name:
			return dir, l, nil
		default:
			err = errors.New(dir + " holds task " + l.Task.Name + ", not " + name)
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = ErrNoRecordedTaskDir
	}
	return "", Loaded{}, first
}
