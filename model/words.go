package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Quantity is n and the noun, plural when n is not one: "1 repeat",
// "3 repeats", "2 sandboxes", "0 tasks". The one place a count is put in
// words, so no line says "1 trials" or "sandbox(es)".
func Quantity(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun)
}

// Noun is the noun as n of it is said: singular for one, else plural.
// The nouns headroom counts are regular (trial → trials, sandbox →
// sandboxes, dependency → dependencies); a phrase ("task file") takes the
// plural on its last word.
func Noun(n int, noun string) string {
	if n == 1 || noun == "" {
		return noun
	}
	head, last := "", noun
	if i := strings.LastIndexByte(noun, ' '); i >= 0 {
		head, last = noun[:i+1], noun[i+1:]
	}
	switch {
	case strings.HasSuffix(last, "s"), strings.HasSuffix(last, "x"), strings.HasSuffix(last, "ch"), strings.HasSuffix(last, "sh"):
		last += "es"
	case strings.HasSuffix(last, "y") && len(last) > 1 && !strings.ContainsRune("aeiou", rune(last[len(last)-2])):
		last = last[:len(last)-1] + "ies"
	default:
		last += "s"
	}
	return head + last
}

// Term is a word the matrix and the report use in a sense of their own,
// with its gloss in one line.
type Term struct{ Word, Gloss string }

// Terms are the matrix's words a new user met unglossed; the matrix's
// help (?) lists them.
var Terms = []Term{
	{"what-if", "predicted from uncapped's peaks: the share a limit would kill"},
	{"contended", fmt.Sprintf("the host made it wait: for a CPU %.0f%% of its time, or memory", 100*ContendedWait)},
	{"p by task", "paired by task: would tasks like these change?"},
	{"pooled p", "Fisher's exact over all trials: did this suite's score change?"},
	{"real", "the 95% interval excludes 0 and the difference is at least 3pp"},
	{"noise", "the whole 95% interval within ±3pp: no difference that large"},
	{"unsure", "neither: the interval too wide to tell (more runs would)"},
	{"power", "the least difference detected 4 times in 5 (80%, α=0.05)"},
	{"[lo–hi]", "a 95% interval: repeats narrow a cell's, tasks a rate's (see power)"},
}
