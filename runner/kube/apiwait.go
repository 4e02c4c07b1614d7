package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
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
// the bound it says so, wrapping runner.ErrPlatformGone.
func (p *Platform) waitAPI(ctx context.Context, cause error) error {
	bo := p.backoff()
	for wait, ok := bo.next(); ok; wait, ok = bo.next() {
		runner.Waiting(ctx, "waiting: the kubernetes API server does not answer")
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if _, err := p.cs.Discovery().ServerVersion(); err == nil {
			return nil
		} else if !unreachable(err) {
			cause = err
		}
	}
	return p.gone(bo.bound, cause)
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
