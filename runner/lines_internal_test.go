package runner

import (
	"strings"
	"testing"
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
	if len(got) != 2 || len(got[0]) != maxLine || len(got[1]) != 10 {
		t.Fatalf("a line of 1 MiB + 10 came as %d pieces", len(got))
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
			for _, g := range got {
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
