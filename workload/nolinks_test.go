package workload

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The reward is read at its own path only: a link at the file or at any
// directory above it is refused, as is what is not a regular file, by
// openat2 and by the walk used where openat2 is missing.
func TestOpenNoLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(real, "reward.txt"), []byte("1\n"), 0o644)
	os.Symlink(filepath.Join(real, "reward.txt"), filepath.Join(dir, "link.txt"))
	os.Symlink(real, filepath.Join(dir, "linkdir"))
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644)
	cases := map[string]error{
		filepath.Join(real, "reward.txt"):               nil,
		filepath.Join(dir, "link.txt"):                  ErrLink,
		filepath.Join(dir, "linkdir", "reward.txt"):     ErrLink,
		filepath.Join(dir, "fifo"):                      ErrNotRegular,
		real:                                            ErrNotRegular,
		filepath.Join(dir, "missing"):                   os.ErrNotExist,
		"/proc/self/root" + filepath.Join(real, "x"):    ErrLink, // a magic link
		filepath.Join(real, "..", "real", "reward.txt"): nil,
	}
	for p, want := range cases {
		f, err := OpenNoLinks(p)
		if f != nil {
			f.Close()
		}
		if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
			t.Errorf("OpenNoLinks(%s) = %v, want %v", p, err, want)
		}
		if p == "/proc/self/root"+filepath.Join(real, "x") {
			continue // the walk sees /proc/self as the link it is too
		}
		fd, err := openWalking(filepath.Clean(p), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW)
		if err == nil {
			unix.Close(fd)
		}
		if errors.Is(want, ErrLink) != errors.Is(err, unix.ELOOP) {
			t.Errorf("openWalking(%s) = %v, want a link refused: %v", p, err, errors.Is(want, ErrLink))
		}
	}
}
