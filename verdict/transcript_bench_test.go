package verdict

import (
	"strings"
	"testing"
)

// BenchmarkTranscriptBlankLines draws 100,000 empty lines: each one
// scrolls the pane, so this is the cost of a long output's rows.
func BenchmarkTranscriptBlankLines(b *testing.B) {
	for b.Loop() {
		var tr Transcript
		for range 100_000 {
			tr.Add("")
		}
	}
}

// BenchmarkTranscriptCombiningMarks draws 100 lines of an e and 2,000
// combining marks on the same cell (the tester's 6 MB case, scaled down).
func BenchmarkTranscriptCombiningMarks(b *testing.B) {
	line := "\x1b[1;1He" + strings.Repeat("\u0301", 2000)
	for b.Loop() {
		var tr Transcript
		for range 100 {
			tr.Add(line)
		}
	}
}

// BenchmarkTranscriptPytestLines draws 10,000 lines of a pytest summary.
func BenchmarkTranscriptPytestLines(b *testing.B) {
	line := "\x1b[32mPASSED\x1b[0m tests/test_outputs.py::test_case_with_a_longer_name[param-1]"
	for b.Loop() {
		var tr Transcript
		for range 10_000 {
			tr.Add(line)
		}
		_ = tr.String()
	}
}
