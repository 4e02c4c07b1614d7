package verdict

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The pytest parser reads the "short test summary info" section that
// `pytest -rA` prints last: from the first such header on, every line
// "STATUS path::name" is a result (a FAILED line's " - message" dropped).
// PASSED, SKIPPED and XFAIL pass; FAILED, ERROR and XPASS fail; other
// lines are not results. No header at all is a parse error.

// summaryHeader is the section's header line; `\s` is spelled out as the
// Unicode whitespace Python's re module matches.
var summaryHeader = regexp.MustCompile(`(?i)=+` + pyWS + `*short test summary info` + pyWS + `*=+`)

const pyWS = `[\t\n\v\f\r \x{1c}-\x{1f}\x{85}\p{Z}]`

// pytestStatus says whether a status word passes; known is false for a
// word that is not a pytest status (including UNKNOWN, which is dropped).
func pytestStatus(word string) (passed, known bool) {
	switch word {
	case "PASSED", "SKIPPED", "XFAIL":
		return true, true
	case "FAILED", "ERROR", "XPASS":
		return false, true
	}
	return false, false
}

var errNoSummary = errors.New("no \"short test summary info\" section in the verifier's output: terminal-bench's pytest parser reads the one `pytest -rA` prints, so it found no test results (a parse error: unresolved)")

func parsePytest(output string) ([]result, error) {
	loc := summaryHeader.FindStringIndex(output)
	if loc == nil {
		return nil, errNoSummary
	}
	var o ordered
	for _, line := range pySplitLines(output[loc[1]:]) {
		if name, passed, ok := pytestLine(line); ok {
			o.set(name, passed)
		}
	}
	return o.list, nil
}

// pytestLine reads one summary line: "FAILED tests/t.py::test_x - why".
func pytestLine(line string) (name string, passed, ok bool) {
	if strings.HasPrefix(line, "FAILED") {
		if parts := strings.Split(line, " - "); len(parts) > 1 {
			line = strings.Join(parts[:len(parts)-1], " - ")
		}
	}
	word, rest, found := pySplitOnce(line)
	if !found {
		return "", false, false
	}
	passed, known := pytestStatus(strings.Trim(word, ":"))
	if !known {
		return "", false, false
	}
	path := pyStrip(rest)
	name = path
	if _, after, cut := strings.Cut(path, "::"); cut {
		name = after
	}
	if name == "" {
		return "", false, false
	}
	return name, passed, true
}

// The SWE-bench parser reads the one word a SWE-bench task's
// run-tests.sh prints between its markers (its own grader's verdict on
// the FAIL_TO_PASS and PASS_TO_PASS tests): one result, "tests", passed
// only when the word is PASSED. Missing markers are a parse error (the
// grader never ran).
const (
	sweStart = "SWEBench results starts here"
	sweEnd   = "SWEBench results ends here"
	mleStart = "MLEBench results starts here"
	mleEnd   = "MLEBench results ends here"
)

var errNoSWEMarkers = errors.New("no SWEBench results between the start and end markers in the verifier's output (\"" + sweStart + "\" … \"" + sweEnd + "\"): the SWE-bench grader did not report, which terminal-bench counts as a parse error (unresolved)")

func parseSWEBench(output string) ([]result, error) {
	if !strings.Contains(output, sweStart) || !strings.Contains(output, sweEnd) {
		return nil, errNoSWEMarkers
	}
	return []result{word("the SWE-bench grader", between(output, sweStart, sweEnd), "PASSED")}, nil
}

// word is the one result of a grader that reports the whole suite in a
// word between its markers.
func word(grader, got, want string) result {
	r := result{name: "tests", passed: got == want}
	if !r.passed {
		if len(got) > 60 {
			got = got[:59] + "…"
		}
		r.why = fmt.Sprintf("%s reported %q, not %s", grader, got, want)
	}
	return r
}

// The MLE-bench parser is the same shape without the check: the text
// between its markers (the whole output if they are missing) must be
// exactly ALL TESTS PASSED.
func parseMLEBench(output string) ([]result, error) {
	return []result{word("the MLE-bench grader", between(output, mleStart, mleEnd), "ALL TESTS PASSED")}, nil
}

// between is the text after the first start marker and before the last
// end marker after it, stripped; a missing marker leaves that side whole.
func between(s, start, end string) string {
	if _, after, ok := strings.Cut(s, start); ok {
		s = after
	}
	if i := strings.LastIndex(s, end); i >= 0 {
		s = s[:i]
	}
	return pyStrip(s)
}

// isPySpace is Python's str.isspace for one rune.
func isPySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }

// pySplitOnce is Python's s.split(maxsplit=1): the first word and the
// rest after the whitespace that follows it; found is false when s holds
// fewer than two words.
func pySplitOnce(s string) (word, rest string, found bool) {
	s = strings.TrimLeftFunc(s, isPySpace)
	i := strings.IndexFunc(s, isPySpace)
	if i < 0 {
		return s, "", false
	}
	word, rest = s[:i], strings.TrimLeftFunc(s[i:], isPySpace)
	return word, rest, rest != ""
}

// pySplitLines is Python's str.splitlines(): lines end at \n, \r\n, \r,
// \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029; no empty last line.
func pySplitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= 0x80 {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, s[start:i])
			start = i + size
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}
