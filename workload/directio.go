package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directAlign is what O_DIRECT buffers and sizes are aligned to.
const directAlign = 4096

// alignedBuffer is n bytes at a directAlign boundary.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directAlign)
	off := int(uintptr(unsafe.Pointer(&b[0])) & (directAlign - 1))
	if off != 0 {
		off = directAlign - off
	}
	return b[off : off+n]
}

// DirectWrites writes ops blocks of kb KiB to a new file in dir, each its
// own O_DIRECT|O_DSYNC write (past the page cache, on the disk before the
// call returns, as a build's many small synced files or a package
// manager's database are), and says how long that took. With a deadline
// it stops there with ErrIODeadline. A disk limit (blkio throttle, io.max)
// acts on exactly these writes on cgroup v1 and v2 alike.
func DirectWrites(dir string, ops, kb int, deadline time.Duration) (IORun, error) {
	var r IORun
	if kb <= 0 || (kb*1024)%directAlign != 0 {
		return r, fmt.Errorf("a write must be a positive multiple of 4 KiB (got %d KiB)", kb)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	path := filepath.Join(dir, fmt.Sprintf(".hr-directio-%d", os.Getpid()))
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_DIRECT|unix.O_DSYNC, 0o644)
	if err != nil {
		return r, fmt.Errorf("open %s with O_DIRECT: %w (the file system must support direct I/O)", path, err)
	}
	defer os.Remove(path)
	defer unix.Close(fd)
	buf := alignedBuffer(kb * 1024)
	for i := range buf {
		buf[i] = byte(i)
	}
	start := time.Now()
	for i := 0; i < ops; i++ {
		n, err := unix.Pwrite(fd, buf, int64(i)*int64(len(buf)))
		if err != nil {
			return r, fmt.Errorf("write %s: %w", path, err)
		}
		r.Ops++
		r.Bytes += int64(n)
		r.Took = time.Since(start)
		if deadline > 0 && r.Took > deadline {
			return r, ErrIODeadline
		}
	}
	r.Took = time.Since(start)
	return r, nil
}
