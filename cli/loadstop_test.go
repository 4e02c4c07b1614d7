package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/taskfile"
)

// A stop signal while the tasks load ends the run at once, interrupted,
// rather than when the load is done (round five: a run held its SIGTERM
// 434 s while a compose file of nested merge keys was read).
func TestLoadGivesWayToAStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	var stderr bytes.Buffer
	res := make(chan error, 1)
	go func() {
		_, err := unlessStopped(ctx, "suite", &stderr, func() (*taskfile.Catalog, error) {
			close(started)
			<-release // a load that does not end until the test is over
			return nil, errors.New("loaded")
		})
		res <- err
	}()
	<-started
	cancel()
	select {
	case err := <-res:
		var ee exitError
		if !errors.As(err, &ee) || ee.code != ExitInterrupted {
			t.Errorf("stopped while loading: %v; want exit %d (interrupted)", err, ExitInterrupted)
		}
		if !strings.Contains(stderr.String(), "interrupted while loading the tasks of suite") {
			t.Errorf("stderr %q; want it to say the load was interrupted", stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("a stop while the tasks load did not end the load's wait within a minute")
	}
}
