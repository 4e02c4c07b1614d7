package taskfile

import (
	"fmt"

	"github.com/headroom-eval/headroom/model"
)

// The TOML library's time grows with the square of how deep tables and
// arrays nest and of how many parts a dotted key has: a 200 KB task.toml
// of 50,000 nested inline tables ran past 120 s at 15.9 GB. Real task
// files nest 3 deep with keys of 3 parts and are a few KiB (headroom's
// largest built-in, 3.2 KiB). These bounds are checked by a scan of the
// bytes before the parser sees them; within them the worst file the
// parser can be given takes it well under a second
// (BenchmarkParseHostileTaskFile measures both sides).
const (
	maxTOMLBytes    = 64 << 10
	maxTOMLDepth    = 6 // tables and arrays nested in one value, headers counted
	maxTOMLKeyParts = 6 // parts of a dotted key or a table header
)

// checkTOMLShape refuses a TOML document larger, deeper or with longer
// dotted keys than any task file needs, naming the line. It reads strings
// and comments as TOML does (so brackets in them do not count) and
// leaves every other judgement to the parser.
func checkTOMLShape(path string, data []byte) error {
	if len(data) > maxTOMLBytes {
		return fmt.Errorf("%s: %s, larger than the %s a task file may be (real ones are a few KiB)", path, model.FormatBytes(int64(len(data))), model.FormatBytes(maxTOMLBytes))
	}
	depth, parts, line := 0, 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line, parts = line+1, 0 // a key is on one line
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			var n int
			i, n = skipTOMLString(data, i)
			line += n
		case '[', '{':
			depth, parts = depth+1, 0
			if depth > maxTOMLDepth {
				return fmt.Errorf("%s:%d: tables and arrays nested more than %d deep: a task file needs a few levels; flatten it", path, line, maxTOMLDepth)
			}
		case ']', '}':
			depth = max(depth-1, 0)
		case '=', ',':
			parts = 0
		case '.':
			if parts++; parts >= maxTOMLKeyParts {
				return fmt.Errorf("%s:%d: a key of more than %d dotted parts: a task file's keys have a few; shorten it", path, line, maxTOMLKeyParts)
			}
		}
	}
	return nil
}

// skipTOMLString returns the index of the last byte of the string that
// starts at data[i] (basic or literal, one line or multi-line) and how
// many newlines it holds. An unterminated string runs to the end: the
// parser says what is wrong with it.
func skipTOMLString(data []byte, i int) (end, newlines int) {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	j := i + 1
	if multi {
		j = i + 3
	}
	for ; j < len(data); j++ {
		switch c := data[j]; {
		case c == '\\' && q == '"':
			j++ // an escape: the next byte is not the closing quote
			if j < len(data) && data[j] == '\n' {
				newlines++
			}
		case c == '\n':
			newlines++
			if !multi {
				return j - 1, newlines - 1 // the parser rejects it; the newline is the scan's
			}
		case c == q && !multi:
			return j, newlines
		case c == q && j+2 < len(data) && data[j+1] == q && data[j+2] == q:
			return j + 2, newlines
		}
	}
	return len(data) - 1, newlines
}
