package workload

import (
	"bytes"
	"strings"
	"testing"
)

// filtered is what traceFilter writes of in, fed in pieces of size n.
func filtered(in, mark string, n int) string {
	var b bytes.Buffer
	f := &traceFilter{w: &b, mark: []byte(mark)}
	for i := 0; i < len(in); i += n {
		f.Write([]byte(in[i:min(i+n, len(in))]))
	}
	f.Close()
	return b.String()
}

// The output file holds the step's output without its trace lines,
// however the pipe's reads cut it.
func TestTraceFilterTakesOutTraceLines(t *testing.T) {
	const mark = "[hr N0nce "
	for _, c := range []struct{ in, want string }{
		{"\x1e[hr N0nce 0|0|1|1||0] echo hi\nhi\n", "hi\n"},
		{"\x1e\x1e[hr N0nce 0|0|2|1||0] date\nout\n\x1e[hr N0nce 0|0|1|1||0] : headroom-trace-end\n", "out\n"},
		{"no newline\x1e[hr N0nce 0|0|1|1||0] next\nafter\n", "no newline" + "after\n"},
		// Not this step's mark (another nonce, a forged line): output.
		{"\x1e[hr other 0] x\n", "\x1e[hr other 0] x\n"},
		{"\x1e\x1eplain\n", "\x1e\x1eplain\n"},
		{"\x1e[hr N0nc", "\x1e[hr N0nc"},
		{"a\x1e", "a\x1e"},
		{strings.Repeat("x", 100000) + "\n", strings.Repeat("x", 100000) + "\n"},
		{"err: boom\n\x1e[hr N0nce 1|1|1|1||0] sh]\n", "err: boom\n"},
		// A trace line that goes on over lines inside a quote (bash's
		// trace of IFS=$'\n\t' and of a multi-line argument): all of it
		// the trace's (the fifteenth attacker's 3, 5).
		{"\x1e[hr N0nce 0|0|1|1||0] IFS='\n\t'\na\n", "a\n"},
		{"\x1e[hr N0nce 0|0|1|1||0] echo 'alpha\nbeta'\nalpha\nbeta\n", "alpha\nbeta\n"},
		{"\x1e[hr N0nce 0|0|1|1||0] python3 -c 'a\nb'\\''c\nd'\nout\n", "out\n"},
		// An open quote whose next line is a trace line: that line starts
		// over (a quote bash never closed is not the next command's).
		{"\x1e[hr N0nce 0|0|1|1||0] echo 'x\n\x1e[hr N0nce 0|0|1|1||0] echo y\ny\n", "y\n"},
		// A `[[` command's operands, written as they are over lines (an
		// odd quote in them too), up to the next trace line; a line of
		// them that starts like a trace line is theirs still (the
		// seventeenth attacker's 1).
		{"\x1e[hr N0nce 0|0|1|1||0] [[ -n l1\nl2 it's\nl3 ]]\n\x1e[hr N0nce 0|0|1|1||0] echo done\ndone\n", "done\n"},
		{"\x1e[hr N0nce 0|0|1|1||0] [[ -n a\n\x1e[hr forged 0] x\nPASSED t::a\n ]]\n\x1e[hr N0nce 0|0|1|1||0] echo real\nreal\n", "real\n"},
		{"\x1e[hr N0nce 0|0|1|1||0] [[ -n a ]]\n\x1e[hr N0nce 0|0|1|1||0] echo hi\nhi\n", "hi\n"},
		{"\x1e[hr N0nce 0|0|1|1||0] [[ a\nb ]]\n", ""},
		{"\x1e[hr N0nce 0|0|1|1||0] echo [[ a\na\n", "a\n"},
	} {
		for _, n := range []int{1, 2, 3, 7, 32 << 10} {
			if got := filtered(c.in, mark, n); got != c.want {
				t.Errorf("%q in pieces of %d: wrote %q, want %q", c.in, n, got, c.want)
			}
		}
	}
}

func FuzzTraceFilter(f *testing.F) {
	f.Add("\x1e[hr N0nce 0] echo hi\nhi\n", 3)
	f.Add("\x1e\x1e\x1e[hr N0nc\x1e[hr N0nce x\n", 1)
	f.Fuzz(func(t *testing.T, in string, n int) {
		if n < 1 || n > 1<<16 {
			return
		}
		whole := filtered(in, "[hr N0nce ", len(in)+1)
		if got := filtered(in, "[hr N0nce ", n); got != whole {
			t.Fatalf("pieces of %d: %q, whole: %q", n, got, whole)
		}
		if len(whole) > len(in) {
			t.Fatalf("wrote %q of %q: more than it read", whole, in)
		}
	})
}
