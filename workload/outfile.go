package workload

import (
	"bytes"
	"io"
	"os"
	"syscall"

	"github.com/headroom-eval/headroom/workload/wire"
)

// A traced step's OutputFile (Command.OutputFile: Harbor's oracle runs
// `set -o pipefail; bash solve.sh 2>&1 | tee /logs/agent/oracle.txt`,
// and a verifier may read that file) is written by the driver from the
// step's one output pipe, the trace lines taken out: the step's output
// reaches headroom through the same pipe, each command's after the trace
// line that starts it, where a tee in the container would let the two
// reorder (a tee tried in round sixteen put a command's output under the
// next command). The driver writes it to the pipe's end, past the
// step's, taking what a job solve.sh left running writes.

// openOutputFile makes (or empties) the step's output file as the
// step's user would have by its shell's redirect: never through a link
// (the driver is root), owned by uid:gid when the step runs as another
// user (-1: the driver's own).
func openOutputFile(name string, uid, gid int) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EINVAL}
	}
	if uid >= 0 {
		_ = f.Chown(uid, gid)
	}
	return f, nil
}

// traceFilter writes what passes through it to w, without the trace
// lines: those that start (after the shell's depth marks, one or more
// 0x1e bytes) with mark, the step's trace marker and nonce, to their
// newline, and on over the next lines while a quote of the traced
// command is open (wire.Quote: `IFS=$'\n\t'`, a `python3 -c '` and its
// program), as the host's parser reads them. A `[[` command's trace goes
// on to the next trace line: bash writes its operands as they are,
// newlines and all, and `[[` itself prints nothing (wire.TracesRaw). It
// holds at most the depth marks and mark's length while it decides: a
// line of any length passes through in pieces.
type traceFilter struct {
	w    io.Writer
	mark []byte
	// seps counts the depth marks held, matched the bytes of mark
	// matched after them; drop: inside a trace line, quote its quoting
	// so far; lineStart: at the start of a line the trace goes on over
	// (cont of them so far), unless a trace line starts there.
	seps, matched int
	drop          bool
	quote         wire.Quote
	lineStart     bool
	cont          int
	// head is the trace line's start after mark, until decided: whether
	// its command is a `[[` (raw), whose trace goes on to the next
	// trace line; afterRaw: held bytes at a line's start there, which
	// are not output either if they turn out not to be a trace line.
	head         []byte
	decided, raw bool
	afterRaw     bool
	err          error
}

const maxDepthMarks = 64

// headBytes is how much of a trace line is read to tell its command.
const headBytes = 64

func (f *traceFilter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && f.err == nil {
		switch {
		case f.drop:
			if f.lineStart {
				f.lineStart = false
				if p[0] == 0x1e {
					f.drop, f.afterRaw = false, f.raw
					continue
				}
			}
			i := bytes.IndexByte(p, '\n')
			line := p
			if i >= 0 {
				line = p[:i]
			}
			if !f.decided {
				f.head = append(f.head, line[:min(len(line), headBytes-len(f.head))]...)
				if i >= 0 || len(f.head) >= headBytes {
					f.decided, f.raw = true, wire.TracesRaw(string(f.head))
				}
			}
			f.quote.Feed(line)
			if i < 0 {
				return n, nil
			}
			p = p[i+1:]
			if f.raw || f.quote.Open() && f.cont < wire.TraceContinuedLines {
				f.quote.Feed([]byte{'\n'})
				f.cont++
				f.lineStart = true
				continue
			}
			f.drop = false
		case f.seps > 0:
			c := p[0]
			switch {
			case c == 0x1e && f.matched == 0 && f.seps < maxDepthMarks:
				f.seps++
				p = p[1:]
			case f.matched < len(f.mark) && c == f.mark[f.matched]:
				f.matched++
				p = p[1:]
				if f.matched == len(f.mark) {
					f.seps, f.matched, f.drop = 0, 0, true
					f.quote, f.cont, f.lineStart = wire.Quote{}, 0, false
					f.head, f.decided, f.raw, f.afterRaw = f.head[:0], false, false, false
				}
			default:
				f.flushHeld()
			}
		default:
			i := bytes.IndexByte(p, 0x1e)
			if i < 0 {
				f.write(p)
				return n, f.err
			}
			f.write(p[:i])
			f.seps, p = 1, p[i+1:]
		}
	}
	return n, f.err
}

// flushHeld writes the bytes held as a possible trace line's start,
// which turned out not to be one.
func (f *traceFilter) flushHeld() {
	if f.afterRaw {
		// A line of a `[[` trace that starts as a trace line would: the
		// trace's still, to its end.
		f.seps, f.matched, f.drop = 0, 0, true
		return
	}
	f.write(append(bytes.Repeat([]byte{0x1e}, f.seps), f.mark[:f.matched]...))
	f.seps, f.matched = 0, 0
}

func (f *traceFilter) write(b []byte) {
	if len(b) > 0 && f.err == nil {
		_, f.err = f.w.Write(b)
	}
}

// Close writes what is held and closes w, if it closes.
func (f *traceFilter) Close() error {
	if f.seps > 0 && !f.drop {
		f.flushHeld()
	}
	if c, ok := f.w.(io.Closer); ok {
		if err := c.Close(); f.err == nil {
			f.err = err
		}
	}
	return f.err
}
