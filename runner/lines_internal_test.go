package runner

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/verdict"
)

// Lines are handed over as they complete, in the order written, whatever
// the chunks; the rest comes at Close.
func TestLineWriterKeepsOrderAcrossChunks(t *testing.T) {
	var got []string
	w := LineWriter(func(s string) { got = append(got, s) })
	for _, chunk := range []string{"one\ntw", "o\r\n", "", "three", "\nfour"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, "|") != "one|two|three" {
		t.Fatalf("before close: %q", got)
	}
	w.Close()
	if strings.Join(got, "|") != "one|two|three|four" {
		t.Fatalf("after close: %q", got)
	}
	got = nil
	w = LineWriter(func(s string) { got = append(got, s) })
	w.Write([]byte(strings.Repeat("x", maxLine+10)))
	w.Close()
	if len(got) != 2 || len(got[0]) != maxLine+1 || !strings.HasSuffix(got[0], "x\n") || got[1] != strings.Repeat("x", 10) {
		t.Fatalf("a line of 1 MiB + 10 came as %d pieces", len(got))
	}
}

// A piece of a line past 1 MiB continues its row on the tests pane, as
// tmux drew the line. Checked with tmux 3.3a on 2026-12-06: after a
// newline (the prompt's row), the summary header, "FAILED
// tests/test_outputs.py::test_b - x" and 'yyyy' + 262,143 ESC[0m +
// "PASSED tests/test_outputs.py::test_b" and a newline, written into a
// fresh 160x40 pane, `capture-pane -p -S -` printed the three rows below
// (then blank ones): the PASSED row does not start with PASSED, and
// terminal-bench reads test_b failed. Handed over in two pieces that each
// ended a row, headroom read test_b passed.
func TestLineWriterPiecesContinueTheirRow(t *testing.T) {
	const head = "=========================== short test summary info ============================"
	out := head + "\nFAILED tests/test_outputs.py::test_b - x\n" +
		"yyyy" + strings.Repeat("\x1b[0m", 262143) + "PASSED tests/test_outputs.py::test_b\n"
	for _, chunk := range []int{1 << 16, 4093, 1 << 22} {
		tr := &verdict.Transcript{}
		w := LineWriter(tr.Add)
		for b := []byte(out); len(b) > 0; {
			n := min(chunk, len(b))
			w.Write(b[:n])
			b = b[n:]
		}
		w.Close()
		want := "\n" + head + "\nFAILED tests/test_outputs.py::test_b - x\nyyyyPASSED tests/test_outputs.py::test_b"
		if got := strings.TrimRight(tr.String(), "\n"); got != want {
			t.Errorf("chunks of %d: the pane reads %q, want %q", chunk, got, want)
		}
		if j, _ := verdict.Judge(verdict.Pytest, tr.String()); j.Passed {
			t.Errorf("chunks of %d: %+v; want test_b failed", chunk, j)
		}
	}
	// The step's output file gets the line whole.
	f := &stepOutputFile{}
	w := LineWriter(f.add)
	w.Write([]byte(out))
	w.Close()
	if f.b.String() != out {
		t.Errorf("the output file holds %d bytes, %d newlines; want the %d written, %d", f.b.Len(), strings.Count(f.b.String(), "\n"), len(out), strings.Count(out, "\n"))
	}
}

// A step's end marker (and its pid marker) begins with a record
// separator and follows an unterminated last line on the same line: a
// piece of a long line never ends inside one, wherever the 1 MiB cut
// falls (else the step's exit was never seen and the trial ended as a
// timeout: a review of the hostile rows found it).
func TestLineWriterNeverCutsAMarker(t *testing.T) {
	marker := "\x1e[headroom-end 0123456789abcdef] 0"
	for _, before := range []int{maxLine - len(marker) + 1, maxLine - 5, maxLine - 1, maxLine, 2*maxLine - 7, 3} {
		for _, chunk := range []int{1 << 16, 4093, 1 << 22} {
			var got []string
			w := LineWriter(func(s string) { got = append(got, s) })
			data := []byte(strings.Repeat("a", before) + marker + "\n")
			for len(data) > 0 {
				n := min(chunk, len(data))
				w.Write(data[:n])
				data = data[n:]
			}
			w.Close()
			whole, total := 0, 0
			for i, g := range got {
				if i < len(got)-1 {
					// A piece that does not end its line ends in a newline.
					if !strings.HasSuffix(g, "\n") {
						t.Errorf("%d bytes before the marker, chunks of %d: piece %d of %d has no newline at its end", before, chunk, i+1, len(got))
					}
					g = strings.TrimSuffix(g, "\n")
				}
				total += len(g)
				if strings.Contains(g, marker) {
					whole++
				} else if strings.Contains(g, "\x1e") {
					t.Errorf("%d bytes before the marker, chunks of %d: a piece holds a cut marker: …%q", before, chunk, g[max(0, len(g)-40):])
				}
				if len(g) > maxLine {
					t.Errorf("a piece of %d bytes, over %d", len(g), maxLine)
				}
			}
			if whole != 1 || total != before+len(marker) {
				t.Errorf("%d bytes before the marker, chunks of %d: %d pieces hold the whole marker, %d bytes handed over; want 1 and %d", before, chunk, whole, total, before+len(marker))
			}
		}
	}
}
