//go:build !linux

package cgroup

import (
	"io"
	"os"
)

// cgFile is a kept-open cgroup file (only Linux has them; elsewhere the
// engine is remote and the stats stream is used).
type cgFile struct{ f *os.File }

func openCgFile(path string) (*cgFile, error) { return openCgFileMode(path, os.O_RDONLY) }

func openCgFileMode(path string, flag int) (*cgFile, error) {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	return &cgFile{f: f}, nil
}

func (c *cgFile) readAt0(buf []byte) (int, error) {
	n, err := c.f.ReadAt(buf, 0)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (c *cgFile) writeAt0(b []byte) error {
	_, err := c.f.WriteAt(b, 0)
	return err
}

func (c *cgFile) close() error { return c.f.Close() }

// ReadFresh reads a whole file opened for this read alone.
func ReadFresh(path string, buf *[]byte) ([]byte, error) {
	b, err := os.ReadFile(path)
	*buf = b
	return b, err
}
