package session

import (
	"context"
	"errors"

	"github.com/headroom-eval/headroom/runner"
)

// ReapLeftovers removes what headroom made (a container or pod, a trial's
// network or volume) whose headroom process is gone
// (a SIGKILL, a closed terminal, a reboot). Kept sandboxes (--keep) and
// those of live runs are left alone, as is a network or volume still in
// use.
func (e *Engine) ReapLeftovers(ctx context.Context) ([]runner.Owned, error) {
	return e.Clean(ctx, func(o runner.Owned) bool { return !o.Kept && !o.OwnerAlive }, false)
}

// Clean removes what headroom made that remove says to, in the order the
// platform listed it (sandboxes before the networks and volumes they use);
// with dry, it removes nothing and returns what it would remove.
func (e *Engine) Clean(ctx context.Context, remove func(runner.Owned) bool, dry bool) ([]runner.Owned, error) {
	all, err := e.P.Owned(ctx)
	if err != nil {
		return nil, err
	}
	var out []runner.Owned
	var errs []error
	for _, o := range all {
		if !remove(o) {
			continue
		}
		if !dry {
			// One that cannot be removed does not keep the others.
			if err := e.P.Remove(ctx, o); errors.Is(err, runner.ErrInUse) {
				continue
			} else if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		out = append(out, o)
	}
	return out, errors.Join(errs...)
}

// Owned lists what headroom made on the platform.
func (e *Engine) Owned(ctx context.Context) ([]runner.Owned, error) { return e.P.Owned(ctx) }
