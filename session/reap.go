package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/runner"
)

// ReapLeftovers removes what headroom made (a container or pod, a trial's
// network or volume) for an experiment under root whose headroom process
// is gone (a SIGKILL, a closed terminal, a reboot), as `clean --out root`
// does. Kept sandboxes (--keep), those of live runs, those whose owner
// label is not complete (OwnerCheck) and those of other experiments roots
// are left alone, as is a network or volume still in use.
func (e *Engine) ReapLeftovers(ctx context.Context, root string) ([]runner.OwnedResource, error) {
	mine := InRoot(root)
	return e.Clean(ctx, func(o runner.OwnedResource) bool { return !o.Kept && !o.OwnerAlive && mine(o) }, false)
}

// InRoot says whether what headroom made belongs to an experiment whose
// directory is under root: its experiment label one path element naming
// a directory there, and its experiments-root label naming root (a copy
// of another root's experiment directory under root does not make that
// root's containers root's). A build's own network, made before its
// run's experiment, belongs to root when its experiments-root label names
// it. What carries no experiments-root label (made by a headroom before
// it set one on trials, or a Kubernetes pod: a path is no label value
// there) is root's by its experiment's directory alone, as it always was:
// refusing it would leave an older run's leftovers to no reap.
func InRoot(root string) func(runner.OwnedResource) bool {
	abs, err := filepath.Abs(root)
	real := runner.AbsRoot(root)
	named := func(label string) bool {
		return err == nil && (label == abs || label == real || runner.AbsRoot(label) == real)
	}
	return func(o runner.OwnedResource) bool {
		if o.Build != "" && o.Kind == "network" {
			return named(o.Root)
		}
		if o.Root != "" && !named(o.Root) {
			return false
		}
		e := o.Experiment
		if e == "" || e == "." || e == ".." || filepath.Base(e) != e {
			return false
		}
		st, err := os.Stat(filepath.Join(root, e))
		return err == nil && st.IsDir()
	}
}

// Clean removes what headroom made that remove says to, in the order the
// platform listed it (sandboxes before the networks and volumes they use);
// with dry, it removes nothing and returns what it would remove.
func (e *Engine) Clean(ctx context.Context, remove func(runner.OwnedResource) bool, dry bool) ([]runner.OwnedResource, error) {
	all, err := e.Platform.Owned(ctx)
	if err != nil {
		return nil, err
	}
	var out []runner.OwnedResource
	var errs []error
	for _, o := range all {
		if !remove(o) {
			continue
		}
		if !dry {
			// One that cannot be removed does not keep the others.
			if err := e.Platform.Remove(ctx, o); errors.Is(err, runner.ErrInUse) {
				continue
			} else if err != nil {
				errs = append(errs, err)
				continue
			}
			o.Removed = time.Now()
		}
		out = append(out, o)
	}
	return out, errors.Join(errs...)
}

// ReapLog is the file in an experiment's directory where the removals of
// leftovers the run that made it did at its start are written, each with
// its evidence, a line each.
const ReapLog = "reaper.log"

// ReapLine is one removal of a leftover as the reaper says it and logs it:
// what, whose, and the owner check that found the owner gone (which pid,
// which start time, what the kernel answered, when).
func ReapLine(o runner.OwnedResource) string {
	return fmt.Sprintf("%s removed leftover %s %s (experiment %s, trial %s, state %s) of headroom %s, gone: %s (checked %s)",
		o.Removed.Format(stampFormat), o.Kind, o.Name, o.Experiment, o.Trial, cmp.Or(o.State, "-"), o.Owner, o.OwnerCheck.Evidence, o.OwnerCheck.At.Format(stampFormat))
}

const stampFormat = "2006-01-02T15:04:05.000000Z07:00"

// AppendReapLog adds the removals' lines to root's ReapLog.
func AppendReapLog(root string, removed []runner.OwnedResource) error {
	if len(removed) == 0 {
		return nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(root, ReapLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, o := range removed {
		b.WriteString(ReapLine(o) + "\n")
	}
	_, err = f.WriteString(b.String())
	return errors.Join(err, f.Close())
}

// Owned lists what headroom made on the platform.
func (e *Engine) Owned(ctx context.Context) ([]runner.OwnedResource, error) {
	return e.Platform.Owned(ctx)
}
