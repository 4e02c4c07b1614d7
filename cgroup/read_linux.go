//go:build linux

package cgroup

import (
	"os"
	"syscall"
	"unsafe"
)

// cgFile is a kept-open cgroup file.
type cgFile struct {
	f  *os.File
	fd uintptr
}

func openCgFile(path string) (*cgFile, error) { return openCgFileMode(path, os.O_RDONLY) }

func openCgFileMode(path string, flag int) (*cgFile, error) {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	return &cgFile{f: f, fd: f.Fd()}, nil
}

// readAt0 reads the file from offset 0 without announcing a system call
// to the Go scheduler. A cgroup file is made by the kernel in memory and
// never blocks; but a read announced as a system call that lasts over
// 20 µs, as memory.stat does on a busy host, lets the scheduler hand the
// processor to another thread and take it back. With 8 trials × 20 Hz ×
// 4 files that hand-over, not the reading, was most of the sampler's cost:
// hundreds of futex and nanosleep calls a second (strace -c).
func (c *cgFile) readAt0(buf []byte) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall6(syscall.SYS_PREAD64, c.fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	}
}

// writeAt0 writes b at offset 0, unannounced like readAt0: a cgroup
// control file's write (a peak's reset) never blocks either.
func (c *cgFile) writeAt0(b []byte) error {
	for {
		_, _, errno := syscall.RawSyscall6(syscall.SYS_PWRITE64, c.fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}

func (c *cgFile) close() error { return c.f.Close() }

// ReadFresh reads a whole file opened for this read alone (a v1
// cgroup.procs, which a kept handle would answer from its first list),
// into *buf, grown as needed: three system calls, none through the Go
// poller (os.ReadFile adds an epoll registration, an fstat and a read
// to see the end).
func ReadFresh(path string, buf *[]byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	if len(*buf) == 0 {
		*buf = make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(*buf) {
			*buf = append(*buf, make([]byte, len(*buf))...)
		}
		b := (*buf)[n:]
		m, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return nil, &os.PathError{Op: "read", Path: path, Err: errno}
		}
		if m == 0 {
			return (*buf)[:n], nil
		}
		n += int(m)
	}
}
