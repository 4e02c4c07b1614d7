package runner

import (
	"strings"
	"testing"
)

// A step's name is its command's words joined by single spaces, cut at 48
// characters — read from the words it keeps alone, so that a trace of
// megabytes costs what a short one does.
func TestTracedNameIsTheCommandShort(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	for cmd, want := range map[string]string{
		"echo   hi\n\tthere":                   "echo hi there",
		"":                                     "(empty)",
		"  \n ":                                "(empty)",
		strings.Repeat("ab ", 30):              strings.Repeat("ab ", 30)[:47] + "…",
		"[[ 1^2 = 1\n2^2 = 4\n" + huge + " ]]": "[[ 1^2 = 1 2^2 = 4 " + strings.Repeat("x", 28) + "…",
		huge:                                   strings.Repeat("x", 47) + "…",
		"日本語 " + strings.Repeat("語", 60):       "日本語 " + strings.Repeat("語", 43) + "…",
	} {
		if got := tracedName(cmd); got != want {
			t.Errorf("tracedName(%.40q) = %q, want %q", cmd, got, want)
		}
	}
}
