package runner

import "context"

type waitingKey struct{}

// WithWaiting returns ctx carrying fn, which a backend's Start calls with
// why the trial's sandbox is not running yet (a cluster's scheduler
// holding its pod: "unschedulable (0/1 nodes have enough memory)"), each
// time that changes, so the trial shows as waiting rather than silent.
func WithWaiting(ctx context.Context, fn func(reason string)) context.Context {
	return context.WithValue(ctx, waitingKey{}, fn)
}

// ReportWaiting tells the function ctx carries, if any, why the sandbox
// is waiting.
func ReportWaiting(ctx context.Context, reason string) {
	if fn, ok := ctx.Value(waitingKey{}).(func(string)); ok && fn != nil {
		fn(reason)
	}
}
