package docker

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The neighbours stop being created once the trial is cancelled: a
// SIGTERM at 22 of 60 went on creating up to 61 for 16 s, the loop's
// context detached from the trial's. The call under way when the cancel
// comes (the 22nd, its create and start run to completion so the
// container is known and removed) finishes; no 23rd starts, and the
// error is the cancellation, so the runner counts the trial cancelled.
func TestNeighboursStopOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started []int
	err := eachUntilCancelled(ctx, 60, func(i int) error {
		started = append(started, i)
		if i == 22 {
			cancel() // the SIGTERM, while the 22nd is being made
		}
		return nil
	})
	if len(started) != 22 || started[21] != 22 {
		t.Errorf("started %v, want 1 to 22 and no more", started)
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled with 22 of 60 started") {
		t.Errorf("error %v, want the cancellation with 22 of 60 started", err)
	}

	// Not cancelled: all of them; an error stops at it.
	n := 0
	if err := eachUntilCancelled(context.Background(), 60, func(int) error { n++; return nil }); err != nil || n != 60 {
		t.Errorf("uncancelled: %d started, %v", n, err)
	}
	boom := errors.New("create: no room")
	n = 0
	if err := eachUntilCancelled(context.Background(), 60, func(i int) error {
		n++
		if i == 3 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) || n != 3 {
		t.Errorf("an error at 3: %d started, %v", n, err)
	}
}
