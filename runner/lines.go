package runner

import (
	"bytes"
	"io"
	"strings"
)

// LineWriter calls fn for each complete line written, in the writer's
// own goroutine (so lines of stdout and stderr keep the order in which the
// engine sent them), and for the rest at Close. A line longer than 1 MiB
// is handed over in pieces of at most 1 MiB, and a piece never ends inside
// a step driver's marker (which begins with a record separator, 0x1e, and
// may follow an unterminated last line of a step on the same line).
func LineWriter(fn func(string)) io.WriteCloser { return &lines{fn: fn} }

type lines struct {
	fn  func(string)
	buf []byte
}

const (
	maxLine = 1 << 20
	// markerRoom is more than any marker's length: a record separator in
	// a piece's last markerRoom bytes starts the next piece instead.
	markerRoom = 128
)

func (l *lines) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.buf = append(l.buf, b...)
			l.pieces()
			break
		}
		l.buf = append(l.buf, b[:i]...)
		l.pieces()
		l.fn(strings.TrimSuffix(string(l.buf), "\r"))
		l.buf = l.buf[:0]
		b = b[i+1:]
	}
	return n, nil
}

// pieces hands over the leading pieces of a line that has grown past
// maxLine, keeping the rest.
func (l *lines) pieces() {
	for len(l.buf) > maxLine {
		cut := maxLine
		if j := bytes.LastIndexByte(l.buf[maxLine-markerRoom:maxLine], 0x1e); j >= 0 {
			cut = maxLine - markerRoom + j
		}
		l.fn(string(l.buf[:cut]))
		l.buf = append(l.buf[:0], l.buf[cut:]...)
	}
}

func (l *lines) Close() error {
	if len(l.buf) > 0 {
		l.fn(string(l.buf))
		l.buf = nil
	}
	return nil
}
