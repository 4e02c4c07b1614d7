package model

import (
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
