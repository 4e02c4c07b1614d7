package workload

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The walk (where openat2 is missing) refuses a link at the file or at
// any directory above it, and a magic link's /proc/self.
func TestOpenWalkingRefusesLinks(t *testing.T) {
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
		fd, err := openWalking(filepath.Clean(p), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW)
		if err == nil {
			unix.Close(fd)
		}
		if errors.Is(want, ErrLink) != errors.Is(err, unix.ELOOP) {
			t.Errorf("openWalking(%s) = %v, want a link refused: %v", p, err, errors.Is(want, ErrLink))
		}
	}
}
