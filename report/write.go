package report

import (
	"io"
	"os"
)

// writeTo saves a canvas to a file, closing it even on error.
func writeTo(file string, c io.WriterTo) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
