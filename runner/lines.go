package runner

import (
	"bytes"
	"io"
	"strings"
)

// LineWriter calls fn for each complete line written, in the writer's
// own goroutine (so lines of stdout and stderr keep the order in which the
// engine sent them), and for the rest at Close. A line longer than 1 MiB
// is handed over in pieces.
func LineWriter(fn func(string)) io.WriteCloser { return &lines{fn: fn} }

type lines struct {
	fn  func(string)
	buf []byte
}

const maxLine = 1 << 20

func (l *lines) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.buf = append(l.buf, b...)
			for len(l.buf) >= maxLine {
				l.fn(string(l.buf[:maxLine]))
				l.buf = append(l.buf[:0], l.buf[maxLine:]...)
			}
			break
		}
		l.buf = append(l.buf, b[:i]...)
		l.fn(strings.TrimSuffix(string(l.buf), "\r"))
		l.buf = l.buf[:0]
		b = b[i+1:]
	}
	return n, nil
}

func (l *lines) Close() error {
	if len(l.buf) > 0 {
		l.fn(string(l.buf))
		l.buf = nil
	}
	return nil
}
