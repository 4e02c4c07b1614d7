package verdict

import "strings"

// A verifier's output is kept whole for its parser, up to the bounds of
// what terminal-bench's harness parses: the test session's tmux pane,
// whose history keeps the last 50,000 lines. The byte bound keeps a
// runaway verifier from holding headroom's memory.
const (
	TranscriptMaxLines = 50_000
	TranscriptMaxBytes = 16 << 20
)

// Transcript is a verifier's output, line by line, keeping the newest
// lines within the bounds.
type Transcript struct {
	lines   []string
	start   int // lines[start:] are kept
	bytes   int
	Dropped int // oldest lines let go to stay within the bounds
}

// Add appends one line of output; on a nil Transcript it does nothing.
func (t *Transcript) Add(line string) {
	if t == nil {
		return
	}
	t.lines = append(t.lines, line)
	t.bytes += len(line) + 1
	for len(t.lines)-t.start > TranscriptMaxLines || (t.bytes > TranscriptMaxBytes && len(t.lines)-t.start > 1) {
		t.bytes -= len(t.lines[t.start]) + 1
		t.lines[t.start] = ""
		t.start++
		t.Dropped++
	}
	if t.start > TranscriptMaxLines {
		// Compact now and then so that dropping stays amortised O(1).
		t.lines = append(t.lines[:0:0], t.lines[t.start:]...)
		t.start = 0
	}
}

// String is the kept output, lines joined by newlines.
func (t *Transcript) String() string {
	if t == nil {
		return ""
	}
	return strings.Join(t.lines[t.start:], "\n")
}
