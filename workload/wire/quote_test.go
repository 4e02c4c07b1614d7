package wire

import "testing"

// Where a trace line leaves a quote open, read from lines bash 5.2's
// xtrace wrote: a word with a newline goes on over the next lines. Fed
// whole and a byte at a time (the step driver reads its pipe in pieces
// that may cut anywhere): the same states.
func TestQuoteReadsBashsTrace(t *testing.T) {
	for _, c := range []struct {
		lines []string
		open  []bool // the state after each line
	}{
		{[]string{"python3 -c 'import sys", `print("hi")'`}, []bool{true, false}},
		{[]string{`echo 'it'\''s'`}, []bool{false}},
		{[]string{"echo 'tab\there'"}, []bool{false}},
		{[]string{"echo 'a", `b' 'it'\''s`, "x'"}, []bool{true, true, false}},
		{[]string{`printf '%s\n' 'q'\''r'`}, []bool{false}},
		{[]string{`echo $'a\'b`, `c'`}, []bool{true, false}},
		{[]string{`echo \'`}, []bool{false}},
		{[]string{"IFS=$'\\n\\t'"}, []bool{false}},
		{[]string{"IFS='", "\t'"}, []bool{true, false}},
		{[]string{"echo $ 'a", "b'"}, []bool{true, false}},
		{[]string{"echo done"}, []bool{false}},
	} {
		for _, bytewise := range []bool{false, true} {
			var q Quote
			for i, l := range c.lines {
				if i > 0 {
					l = "\n" + l
				}
				if bytewise {
					for j := 0; j < len(l); j++ {
						q.Feed([]byte{l[j]})
					}
				} else {
					q.FeedString(l)
				}
				if q.Open() != c.open[i] {
					t.Errorf("%q (a byte at a time: %v): after line %d, open %v, want %v", c.lines, bytewise, i+1, q.Open(), c.open[i])
					break
				}
			}
		}
	}
}

// A `[[` command's trace line, read from the marker's end, as bash 5.2
// and the filter see it; nothing else is.
func TestTracesRaw(t *testing.T) {
	for line, want := range map[string]bool{
		"0|0|12|12||0] [[ -n l1":      true,
		"1|1|12|12|1|0] [[ a == b ]]": true,
		"0|0|12|12||0] echo [[ x":     false,
		"0|0|12|12||0] [ -n x ]":      false,
		"sh] [[ x":                    true,
		"0|0|12":                      false,
	} {
		if got := TracesRaw(line); got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}
