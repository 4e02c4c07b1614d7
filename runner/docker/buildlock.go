package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockBuild holds this host's lock on building tag: two headroom runs
// building one uncached task at once built it twice, and the image that
// lost the tag stayed on the engine, untagged, the size of the task's
// environment (the sixteenth attacker's 9). The second now waits, saying
// so, and finds the first's image cached. The lock is a file beside
// headroom's record of what it built (flock: the kernel lets it go when
// its holder dies); without a cache directory there is none, and a
// build that lost its tag removes its own image (dropLostBuild). It
// returns what lets it go, or ctx's error while waiting.
func lockBuild(ctx context.Context, tag string, progress func(string)) (func(), error) {
	rec := builtRecordPath()
	if rec == "" {
		return func() {}, nil
	}
	dir := filepath.Join(filepath.Dir(rec), "build-locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}, nil
	}
	sum := sha256.Sum256([]byte(tag))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:8])+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}, nil
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return func() {}, nil
		}
		if !said {
			progress(fmt.Sprintf("waiting for another headroom on this host building %s", tag))
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
