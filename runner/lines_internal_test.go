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
