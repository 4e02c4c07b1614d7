package taskfile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func nest(open, close string, n int) string {
	return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
}

func TestTOMLShape(t *testing.T) {
	cases := []struct {
		name, doc string
		err       string // "" for accepted
	}{
		{"real", "[task]\nname = \"x\"\n[[agents]]\nname = \"a\"\n[[agents.steps]]\nworkload = { style = \"pip\", packages = [\"a\", \"b\"] }\n", ""},
		{"inline tables 6 deep", "x = " + nest("{a=", "}", 6) + "\n", ""},
		{"inline tables 7 deep", "[task]\nx = " + nest("{a=", "}", 7) + "\n", "f.toml:2: tables and arrays nested more than 6 deep"},
		{"inline tables 50,000 deep (200 KB)", "x = " + nest("{a=", "}", 50000) + "\n", "f.toml: 195.3KiB, larger than the 64KiB"},
		{"inline tables 10,000 deep (40 KB)", "x = " + nest("{a=", "}", 10000) + "\n", "f.toml:1: tables and arrays nested more than 6 deep"},
		{"arrays 7 deep", "x = " + nest("[", "]", 7) + "\n", "nested more than 6 deep"},
		{"an array of tables in a table header", "[[a.b]]\nx = [[[[1]]]]\n", ""},
		{"brackets in strings and comments", "a = \"[[[[[[[[[[{{{{{{{\"\nb = '[[[[[[[[[[['\nc = \"\"\"\n[[[[[[[[[[[\n\"\"\"\nd = '''\n{{{{{{{{{{{\n'''\n# [[[[[[[[[[[[\ne = \"\\\"[[[[[[[[[[\"\n", ""},
		{"a string ending in quotes", "a = \"\"\"x\"\"\"\"\"\nb = " + nest("[", "]", 7) + "\n", "f.toml:2: tables and arrays nested more than 6 deep"},
		{"lines counted inside strings", "a = \"\"\"\n\n\n\"\"\"\nb = " + nest("[", "]", 7) + "\n", "f.toml:5:"},
		{"a dotted key of 6 parts", "a.b.c.d.e.f = 1\n", ""},
		{"a dotted key of 7 parts", "x = 1.5\na.b.c.d.e.f.g = 1\n", "f.toml:2: a key of more than 6 dotted parts"},
		{"a table header of 30,000 parts", "[" + strings.TrimSuffix(strings.Repeat("a.", 30000), ".") + "]\n", "f.toml:1: a key of more than 6 dotted parts"},
		{"dots in a quoted key", "\"a.b.c.d.e.f.g.h.i.j\" = 1\n", ""},
		{"floats in an array", "x = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 1.5]\n", ""},
		{"too large", "# " + strings.Repeat("x", maxTOMLBytes) + "\n", "f.toml: 64.0KiB, larger than the 64KiB"},
	}
	for _, c := range cases {
		err := checkTOMLShape("f.toml", []byte(c.doc))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v; want %q", c.name, err, c.err)
		}
	}
}

// The task.toml, 50,000 inline tables deep (200 KB), which the
// parser took > 120 s and 15.9 GB over, and one of 16,000 (64 KB, as deep
// as the size bound lets through): refused before the parser, with the
// file and the line; the time is BenchmarkParseHostileTaskFile's.
func TestDeepTaskFileRefusedBeforeParsing(t *testing.T) {
	for depth, want := range map[int]string{50000: "deep.toml: 195.4KiB, larger than the 64KiB", 16000: "deep.toml:5: tables and arrays nested more than 6 deep"} {
		doc := "schema_version = \"1.1\"\n[task]\nname = \"deep\"\n[metadata]\nx = " + nest("{a=", "}", depth) + "\n"
		start := time.Now()
		_, err := Parse("deep.toml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("depth %d: %v; want %q", depth, err, want)
		}
		t.Logf("depth %d, %d bytes: refused in %s", depth, len(doc), time.Since(start))
	}
}

// BenchmarkParseHostileTaskFile: the shapes that make the TOML library
// slow, refused by the scan and (within the bounds) parsed.
//
//	go test -run '^$' -bench ParseHostileTaskFile -benchmem ./taskfile
func BenchmarkParseHostileTaskFile(b *testing.B) {
	deep := "x = " + nest("{a=", "}", 50000) + "\n"
	var atBounds strings.Builder
	for i := 0; atBounds.Len() < maxTOMLBytes-200; i++ {
		fmt.Fprintf(&atBounds, "x%d = %s\n", i, nest("{a=", "}", maxTOMLDepth))
	}
	real := "schema_version = \"1.1\"\n[task]\nname = \"terminal-bench/x\"\ndescription = \"a real task\"\n[verifier]\ntimeout_sec = 900.0\n[agent]\ntimeout_sec = 900.0\n[environment]\ncpus = 1\nmemory_mb = 2048\n"
	for _, c := range []struct{ name, doc string }{
		{"refused/nested-50000-200KB", deep},
		{"refused/nested-16000-64KB", "x = " + nest("{a=", "}", 16000) + "\n"},
		{"refused/header-30000-parts", "[" + strings.TrimSuffix(strings.Repeat("a.", 30000), ".") + "]\n"},
		{"accepted/real-task", real},
		{"accepted/worst-at-the-bounds", atBounds.String()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			for b.Loop() {
				var f fileTask
				_, _ = f.decode("f.toml", []byte(c.doc))
			}
		})
	}
}

// FuzzTOMLShape: whatever the scan lets through, the parser finds no
// deeper structure than the bounds allow (a header's parts, a key's
// parts, a value's nesting), so the scan reads strings and comments as
// the parser does and cannot be talked past.
func FuzzTOMLShape(f *testing.F) {
	for _, s := range []string{
		"a = \"[[[[\"\nb = [[1]]\n", "c = '''\n{{{{'''\n", "d = \"\"\"x\\\"\"\"[[[[[[[[\"\"\"\n",
		"[a.b.\"c.d\".e]\nx.y = {z = [1, {w = 2}]}\n", "e = 'x\\' = [[[[[[[[1]]]]]]]]\n", "# [[[[\nf = 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkTOMLShape("f.toml", data) != nil {
			return
		}
		var v map[string]any
		if _, err := toml.Decode(string(data), &v); err != nil {
			return
		}
		if d := depthOf(v); d > 2*maxTOMLKeyParts+maxTOMLDepth {
			t.Fatalf("accepted, but the parser built a structure %d deep from %q", d, data)
		}
	})
}

func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}
