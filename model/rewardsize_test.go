package model

import (
	"fmt"
	"strings"
	"testing"
)

// A reward file is read up to MaxRewardFileBytes, as Harbor reads one of
// any size, but only its content is parsed, and at most
// MaxRewardContentBytes of it: reward.txt's text without the spaces
// around it, reward.json's without the spaces between its tokens. A
// 64 MiB reward.json of 6.2 million keys took this parser 1 GB of
// headroom's memory and over a minute; padded with spaces, any reward
// reads as Harbor reads it.
func TestParseRewardParsesOnlyItsContent(t *testing.T) {
	many := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q: 1", fmt.Sprintf("key-%d", i))
		}
		return b.String() + "}"
	}
	for _, c := range []struct {
		name, file, data string
		want             float64
		err              string
	}{
		{"a 1 and 2 MB of newlines", "reward.txt", "1" + strings.Repeat("\n", 2_000_000), 1, ""},
		{"spaces, then 0.5", "reward.txt", strings.Repeat(" \t\n", 1_000_000) + "0.5\n", 0.5, ""},
		{"json padded", "reward.json", "{\"reward\":\n" + strings.Repeat(" ", 60<<20) + "1}\n", 1, ""},
		{"spaces in a key count", "reward.json", "{\"" + strings.Repeat(" ", 2<<20) + "\": 1}", 0, "headroom parses at most"},
		{"60,000 keys (1 MiB with its spaces)", "reward.json", many(60_000), 1, ""},
		{"2 MiB of digits", "reward.txt", strings.Repeat("1", 2<<20), 0, "headroom parses at most"},
		{"200,000 keys", "reward.json", many(200_000), 0, "headroom parses at most"},
	} {
		r, err := ParseReward(c.file, []byte(c.data))
		switch {
		case c.err == "" && (err != nil || r != c.want):
			t.Errorf("%s: %g, %v; want %g", c.name, r, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %g, %v; want an error saying %q", c.name, r, err, c.err)
		}
	}
}
