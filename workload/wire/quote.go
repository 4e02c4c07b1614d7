package wire

import "strings"

// Quote is the quoting state of a shell's trace line read so far: bash
// and dash write a word holding a newline in single quotes (or bash's
// $'…'), the newline as it is, so a command's trace line goes on over the
// next lines of the step's output until its quote closes (`python3 -c '`
// and then the program), and those lines are the command, not what it
// printed. The host's trace parser (runner) and the step driver's output
// file (workload: /logs/agent/oracle.txt) both read a trace line so.
// Outside quotes a backslash escapes the next byte (how bash writes a
// quote inside a quoted word: close, backslash, quote, open); inside $'…'
// too. The state carries over between pieces fed.
type Quote struct {
	q      byte // 0 outside quotes, '\'' inside '…', '$' inside $'…'
	esc    bool // the last byte fed escapes the next
	dollar bool // the last byte fed was a $ outside quotes
}

// TraceContinuedLines bounds how many lines a trace line is read to go on
// over: past it, what follows is the command's output again.
const TraceContinuedLines = 1000

// Open says whether the trace line is inside a quote: it goes on.
func (q Quote) Open() bool { return q.q != 0 }

// Feed reads the next bytes of the trace line.
func (q *Quote) Feed(b []byte) {
	for _, c := range b {
		q.feed(c)
	}
}

// FeedString is Feed of a string.
func (q *Quote) FeedString(s string) {
	for i := 0; i < len(s); i++ {
		q.feed(s[i])
	}
}

func (q *Quote) feed(c byte) {
	if q.esc {
		q.esc = false
		return
	}
	dollar := q.dollar
	q.dollar = false
	switch q.q {
	case 0:
		switch c {
		case '\\':
			q.esc = true
		case '\'':
			q.q = '\''
			if dollar {
				q.q = '$'
			}
		case '$':
			q.dollar = true
		}
	case '\'':
		if c == '\'' {
			q.q = 0
		}
	case '$':
		switch c {
		case '\\':
			q.esc = true
		case '\'':
			q.q = 0
		}
	}
}

// TracesRaw says whether a trace line (from the marker's end: the
// shell's state, "] ", then the command) is a `[[` command's, whose
// operands bash writes as they are, newlines and all: the trace goes on
// over every line up to the next trace line (`[[` prints nothing
// itself). Unquoted, a captured multi-line value's later lines were read
// as the step's output, the tests pane's and oracle.txt's (the
// seventeenth attacker's 1).
func TracesRaw(line string) bool {
	i := strings.Index(line, "] ")
	return i >= 0 && RawCommand(line[i+2:])
}

// RawCommand says whether a traced command (as the trace line has it,
// past the shell's state) is one whose trace goes on to the next trace
// line: a `[[`.
func RawCommand(cmd string) bool { return strings.HasPrefix(cmd, "[[ ") }
