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
//
// A piece that does not end its line ends with a newline, which no line
// handed over holds: its reader continues the line with the next piece
// (verdict.Transcript draws it on the same row). Handed over alike, a
// line of 'yyyy', 262,143 ESC[0m and "PASSED tests/test_outputs.py::
// test_b" was two rows on headroom's pane, the PASSED one starting a row
// as terminal-bench's parser reads one, where tmux drew one row and the
// test failed.
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
		var piece strings.Builder // the piece and its newline, copied once
		piece.Grow(cut + 1)
		piece.Write(l.buf[:cut])
		piece.WriteByte('\n')
		l.fn(piece.String())
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
