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

// RewardBuffer keeps a small file whole and a large one squeezed (each
// run of spaces outside a string one space), which ParseRewards reads as
// it reads the file itself, in a few MiB however much is written.
func TestRewardBufferReadsAsTheFile(t *testing.T) {
	pad := strings.Repeat(" \n\t\r", 1<<19) // 2 MiB of spaces
	for _, c := range []struct{ file, data string }{
		{"reward.txt", "1" + pad},
		{"reward.txt", pad + "0.25" + pad},
		{"reward.txt", "1" + pad + "2"},
		{"reward.txt", "1\n\n"},
		{"reward.json", "{\"reward\":" + pad + "1}"},
		{"reward.json", "{\"reward\":" + pad + "-" + pad + "1}"},
		{"reward.json", "{\"a b\n\":" + pad + "0.5, \"reward\": tr" + pad + "ue}"},
		{"reward.json", "{\"reward\": \"1" + pad + "\"}"},
	} {
		var b RewardBuffer
		for rest := c.data; rest != ""; {
			k := min(len(rest), 4096)
			b.Write([]byte(rest[:k]))
			rest = rest[k:]
		}
		kept, err := b.Bytes()
		if len(c.data) <= MaxRewardContentBytes && string(kept) != c.data {
			t.Errorf("%s of %d bytes kept as %d", c.file, len(c.data), len(kept))
		}
		want, wantErr := ParseReward(c.file, []byte(c.data))
		got, gotErr := ParseReward(c.file, kept)
		if err == nil && (want != got || (wantErr == nil) != (gotErr == nil)) {
			t.Errorf("%s %.40q: kept %d bytes read %g, %v; the file %g, %v", c.file, c.data, len(kept), got, gotErr, want, wantErr)
		}
		if err == nil && len(kept) > 2*MaxRewardContentBytes+1 {
			t.Errorf("%s: kept %d bytes", c.file, len(kept))
		}
	}
	var b RewardBuffer
	for range 64 {
		b.Write([]byte("1" + strings.Repeat(" ", 1<<20)))
	}
	if kept, err := b.Bytes(); err != nil || len(kept) != 128 || b.Len() != 64*(1<<20+1) {
		t.Errorf("64 MiB of 1s and spaces: kept %d bytes, %v (of %d)", len(kept), err, b.Len())
	}
	var over RewardBuffer
	over.Write([]byte(strings.Repeat("12", 1<<20+1)))
	if _, err := over.Bytes(); err == nil || !strings.Contains(err.Error(), "headroom parses at most") {
		t.Errorf("2 MiB of digits: %v, want more than it parses", err)
	}
}
