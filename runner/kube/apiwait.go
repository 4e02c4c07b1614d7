package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/headroom-eval/headroom/runner"
)

// DefaultAPIWait is how long a trial's start waits, at most, for an API
// server that stopped answering (a restart, a cluster going down) before
// the sweep is stopped, interrupted (runner.ErrPlatformGone): the Docker
// backend's wait for its engine.
const DefaultAPIWait = 60 * time.Second

// unreachable says whether err is the API server not answering at all
// (refused, reset, cut off, unavailable), as opposed to an answer.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return apierrors.IsServiceUnavailable(err)
	}
	var ne net.Error
	var ue *url.Error
	var op *net.OpError
	return errors.As(err, &op) || errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// waitAPI waits, with backoff, until the API server answers again; past
// the bound it says so, wrapping runner.ErrPlatformGone. The wait is said
// and counted as the trial's start's (startWait).
func (p *Platform) waitAPI(ctx context.Context, cause error) error {
	w := waitOf(ctx)
	defer w.since(time.Now(), &w.api)
	bo := p.backoff()
	for wait, ok := bo.next(); ok; wait, ok = bo.next() {
		w.say("waiting: the kubernetes API server does not answer")
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if err := p.ping(ctx); err == nil {
			return nil
		} else if !unreachable(err) {
			cause = err
		}
	}
	return p.gone(bo.bound, cause)
}

// pingTimeout bounds one look at the API server: a frozen one (its
// process stopped, its connections open) answers nothing, ever.
const pingTimeout = 5 * time.Second

// ping asks the API server its version, for at most pingTimeout.
func (p *Platform) ping(ctx context.Context) error {
	rc := p.cs.Discovery().RESTClient()
	if rc == nil { // a fake clientset's discovery
		_, err := p.cs.Discovery().ServerVersion()
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return rc.Get().AbsPath("/version").Do(ctx).Error()
}

// DefaultSlowCall is how long a call of a trial's start (creating its
// pod, its NetworkPolicy) may go unanswered before the trial says it
// waits on the API server (and counts the call's time as its wait).
const DefaultSlowCall = 2 * time.Second

// slowCall runs call; one the API server has not answered after the
// platform's slowCall says so, and its whole time is the start's wait.
func (p *Platform) slowCall(ctx context.Context, what string, call func() error) error {
	after := p.slowAfter
	if after <= 0 {
		after = DefaultSlowCall
	}
	w := waitOf(ctx)
	start := time.Now()
	done, said := make(chan struct{}), make(chan bool, 1)
	go func() {
		t := time.NewTimer(after)
		defer t.Stop()
		select {
		case <-done:
			said <- false
		case <-t.C:
			w.say(fmt.Sprintf("waiting: the kubernetes API server has not answered %s for %s", what, after))
			said <- true
		}
	}()
	err := call()
	close(done)
	if <-said {
		w.since(start, &w.api)
	}
	return err
}

// startWait adds up what a trial's start waited for that is not the
// task's time: the API server not answering (api), the scheduler holding
// its pod (held); why is the last wait said. Only the start's goroutine
// and its slowCall watchdogs touch it.
type startWait struct {
	mu        sync.Mutex
	api, held time.Duration
	why       string
	// tell says a wait to the trial (runner.StartRequest.Wait).
	tell func(reason string)
}

type startWaitKey struct{}

// withStartWait carries w in ctx for the start's helpers.
func withStartWait(ctx context.Context, w *startWait) context.Context {
	return context.WithValue(ctx, startWaitKey{}, w)
}

// waitOf is ctx's startWait (a throwaway one outside a start).
func waitOf(ctx context.Context) *startWait {
	if w, ok := ctx.Value(startWaitKey{}).(*startWait); ok {
		return w
	}
	return &startWait{tell: func(string) {}}
}

// say says the wait (tell) and keeps it as the last why.
func (w *startWait) say(reason string) {
	w.mu.Lock()
	w.why = strings.TrimPrefix(reason, "waiting: ")
	w.mu.Unlock()
	w.tell(reason)
}

// since adds the time since start to *d.
func (w *startWait) since(start time.Time, d *time.Duration) {
	w.mu.Lock()
	*d += time.Since(start)
	w.mu.Unlock()
}

// total is the start's wait so far.
func (w *startWait) total() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.api + w.held
}

// wrap is a failed start's error with its wait (runner.WaitedError), as
// it is when there was none.
func (w *startWait) wrap(err error) error {
	if err == nil {
		return nil
	}
	d := w.total()
	if d <= 0 {
		return err
	}
	w.mu.Lock()
	why := w.why
	w.mu.Unlock()
	return &runner.WaitedError{Err: err, For: d, Why: why}
}

// gone is the error past the bound: the sweep stops, to be resumed.
func (p *Platform) gone(bound time.Duration, cause error) error {
	return fmt.Errorf("the kubernetes API server %s did not answer for %s (%v): %w", p.host, bound, cause, runner.ErrPlatformGone)
}

// apiBackoff spaces the looks at an API server that failed: from 250 ms,
// doubling to 5 s, for at most bound (the platform's apiWait) in all.
type apiBackoff struct {
	bound    time.Duration
	deadline time.Time
	wait     time.Duration
}

func (p *Platform) backoff() *apiBackoff {
	bound := p.apiWait
	if bound <= 0 {
		bound = DefaultAPIWait
	}
	return &apiBackoff{bound: bound, deadline: time.Now().Add(bound), wait: 250 * time.Millisecond}
}

// next is the wait before the next look, false past the bound.
func (b *apiBackoff) next() (time.Duration, bool) {
	left := time.Until(b.deadline)
	if left <= 0 {
		return 0, false
	}
	w := min(b.wait, left)
	b.wait = min(2*b.wait, 5*time.Second)
	return w, true
}
