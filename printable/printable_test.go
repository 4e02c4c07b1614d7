package printable

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	cases := map[string]string{
		"plain ascii":                      "plain ascii",
		"clear\x1b[2J\x1b[Hhome":           `clear\u001b[2J\u001b[Hhome`,
		"title\x1b]0;pwned\x07 after":      `title\u001b]0;pwned\u0007 after`,
		"row\nforged row":                  `row\nforged row`,
		"cr\roverwrite":                    `cr\roverwrite`,
		"c1 csi \u009b2J":                  `c1 csi \u009b2J`,
		"bidi \u202eevil\u202c":            `bidi \u202eevil\u202c`,
		"bad \xff\xfe utf8":                `bad \xff\xfe utf8`,
		"a\tb":                             "a       b",
		"tab\tstop":                        "tab     stop",
		"ünïcödé ✓ 日本 → fine":              "ünïcödé ✓ 日本 → fine",
		"del\x7f":                          `del\u007f`,
		"nul\x00":                          `nul\u0000`,
		"\x1b":                             `\u001b`,
		"emoji 👍🏽 and zwj 👩‍💻":             "emoji 👍🏽 and zwj 👩‍💻",
		"separator\u2028next":              `separator\u2028next`,
		"backslash \\x1b stays as written": "backslash \\x1b stays as written",
	}
	for in, want := range cases {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		if Is(in) != (in == want) {
			t.Errorf("Is(%q) = %v", in, Is(in))
		}
	}
	if got := Text("a\nb\x1b[2J\r\n"); got != `a`+"\n"+`b\u001b[2J\r`+"\n" {
		t.Errorf("Text kept %q", got)
	}
	if r, ok := First("name\x1b[2J"); !ok || r != 0x1b {
		t.Errorf("First = %q %v", r, ok)
	}
	if _, ok := First("fine ✓"); ok {
		t.Error("First found something in a printable string")
	}
}

// Whatever goes in, nothing a terminal acts on comes out of Line, and
// Text adds only newlines.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "a\nb", "\u009b", "\xff", "\t\t", "日本\x1b]0;x\x07"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Line": Line(s), "Text": strings.ReplaceAll(Text(s), "\n", "")} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q is not UTF-8", name, s, out)
			}
			for _, r := range out {
				if r == '\t' || unsafe(r) {
					t.Fatalf("%s(%q) = %q holds %U", name, s, out, r)
				}
			}
		}
		if Is(s) && Line(s) != s {
			t.Fatalf("Is(%q) but Line changes it", s)
		}
	})
}

// The Writer's fast path (safeText: eight bytes at a time) passes p
// unchanged only where Text, a tab-separated piece at a time, would:
// random texts of printable ASCII, newlines and tabs with a byte of
// another kind (a control, DEL, C1, a bidi control, a cut rune, plain
// UTF-8) at every place of a word.
func TestWriterFastPathIsText(t *testing.T) {
	others := []string{"\x1b", "\x7f", "\u0085", "\u202e", "\xe6\x97", "日", "é", "\r", "\x00", "\u2028"}
	base := "{\"a\":\"line\\tx\"}\n\tpadded  text~ "
	for _, o := range append(others, "") {
		for at := 0; at <= 16; at++ {
			p := []byte(base[:at] + o + base[at:])
			var want strings.Builder
			for i, piece := range strings.Split(string(p), "\t") {
				if i > 0 {
					want.WriteByte('\t')
				}
				want.WriteString(Text(piece))
			}
			if fast := safeText(p) == len(p); fast != (want.String() == string(p)) {
				t.Errorf("%q: safeText says unchanged %v, Text changes it: %v", p, fast, want.String() != string(p))
			}
		}
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := Writer(&buf)
	// A rune cut between writes, a tab kept, an escape escaped.
	s := "a\tb 日本\x1b[2J\n"
	for i := 0; i < len(s); i++ {
		if _, err := w.Write([]byte{s[i]}); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if want := "a\tb 日本\\u001b[2J\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
	buf.Reset()
	w.Write([]byte{0xe6, 0x97}) // a cut rune that never ends
	w.Flush()
	if buf.String() != `\xe6\x97` {
		t.Errorf("flushed %q", buf.String())
	}
}

type inner struct {
	Name string
	Out  string `printable:"text"`
	n    string
}

type outer struct {
	Task   string
	Steps  []inner
	Ptr    *inner
	ByName map[string]inner
	Any    any
	Fixed  [2]string
	Clean  []string
	Count  int
}

// Value reaches every string however deep, keeps newlines only where the
// field says it is a block, and changes nothing of what it was given.
func TestValue(t *testing.T) {
	bad := "x\x1b[2J\ny"
	clean := []string{"fine"}
	in := outer{Task: bad, Steps: []inner{{Name: "ok"}, {Name: bad, Out: bad, n: bad}}, Ptr: &inner{Name: bad},
		ByName: map[string]inner{bad: {Name: bad}}, Any: inner{Name: bad}, Fixed: [2]string{"a", bad}, Clean: clean, Count: 3}
	got := Value(in)
	line, text := `x\u001b[2J\ny`, "x\\u001b[2J\ny"
	if got.Task != line || got.Steps[1].Name != line || got.Steps[1].Out != text || got.Ptr.Name != line ||
		got.ByName[line].Name != line || got.Any.(inner).Name != line || got.Fixed[1] != line || got.Count != 3 {
		t.Errorf("Value = %+v", got)
	}
	if got.Steps[1].n != bad {
		t.Errorf("an unexported field was changed")
	}
	if in.Task != bad || in.Steps[1].Name != bad || in.Ptr.Name != bad || in.ByName[bad].Name != bad || in.Fixed[1] != bad {
		t.Errorf("Value changed its argument: %+v", in)
	}
	if &got.Clean[0] != &clean[0] {
		t.Errorf("an unchanged slice was copied")
	}
	if v := Value("plain"); v != "plain" {
		t.Errorf("%q", v)
	}
}

// A type that refers to itself is walked whole, and a string reached
// only through a type planned while its referrer was is still reached
// (walk plans each type once and skips those that hold no string).
func TestValueOfTypesThatReferToThemselves(t *testing.T) {
	type b struct {
		A     *chain
		Count int
	}
	type numbers struct {
		N  int
		At [3]float64
	}
	bad := "x\x1b]0;title\x07"
	in := chain{Next: &chain{Next: &chain{Name: bad}}, B: &b{A: &chain{Name: bad}}, Nums: numbers{N: 1}}
	got := Value(in)
	if got.Next.Next.Name != `x\u001b]0;title\u0007` || got.B.(*b).A.Name != `x\u001b]0;title\u0007` || got.Nums.(numbers).N != 1 {
		t.Errorf("Value = %+v / %+v", got.Next.Next, got.B)
	}
}

type chain struct {
	Next *chain
	B    any
	Nums any
	Name string
}

func TestStyled(t *testing.T) {
	for in, want := range map[string]string{
		"┌─ box ─┐\n│ \x1b[1;38;2;1;2;3mbold\x1b[0m │": "┌─ box ─┐\n│ \x1b[1;38;2;1;2;3mbold\x1b[0m │",
		"\x1b[31mred\x1b[2J\x1b]0;t\x07":               "\x1b[31mred\\u001b[2J\\u001b]0;t\\u0007",
		"a\rb\x1b[m":                                   "a\\rb\x1b[m",
		"\x1b[":                                        "\\u001b[",
		"\x1b[38;5;1":                                  "\\u001b[38;5;1",
	} {
		if got := Styled(in); got != want {
			t.Errorf("Styled(%q) = %q, want %q", in, got, want)
		}
	}
}

// Characters drawn as nothing are escaped: 21 zero width spaces in a task
// name moved its row's cells under the header before theirs, as a table
// pads by runes. An emoji's own joiner and presentation selector stay.
func TestInvisibleCharactersAreEscaped(t *testing.T) {
	cases := map[string]string{
		"atk/zw\u200b\u200b":        `atk/zw\u200b\u200b`,
		"bom\ufeff":                 `bom\ufeff`,
		"soft\u00adhyphen":          `soft\u00adhyphen`,
		"word\u2060joiner":          `word\u2060joiner`,
		"zwnj\u200cx zwj\u200dx":    `zwnj\u200cx zwj\u200dx`,
		"vs\ufe0f alone":            `vs\ufe0f alone`,
		"hangul\u3164filler\u115f":  `hangul\u3164filler\u115f`,
		"cgj\u034f":                 `cgj\u034f`,
		"tag\U000e0041":             `tag\ue0041`,
		"👩\u200d💻 ❤\ufe0f":          "👩\u200d💻 ❤\ufe0f",
		"👩\u200d\u200d💻":            `👩\u200d\u200d💻`,
		"\u200d💻 and 👩\u200d":       `\u200d💻 and 👩\u200d`,
		"a\u200bb":                  `a\u200bb`,
		"ünïcödé ✓ 日本 → fine (Ω≈ç)": "ünïcödé ✓ 日本 → fine (Ω≈ç)",
	}
	for in, want := range cases {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		if Is(in) != (in == want) {
			t.Errorf("Is(%q) = %v", in, Is(in))
		}
		var b strings.Builder
		w := Writer(&b)
		w.Write([]byte(in))
		w.Flush()
		if b.String() != want {
			t.Errorf("Writer wrote %q for %q, want %q", b.String(), in, want)
		}
	}
	if r, ok := First("atk/zw\u200b"); !ok || r != 0x200b {
		t.Errorf("First = %U %v, want U+200B", r, ok)
	}
	if s := Styled("\x1b[1mname\u200b\x1b[0m"); s != "\x1b[1mname\\u200b\x1b[0m" {
		t.Errorf("Styled kept %q", s)
	}
}

// A name is shown one column a character: wide and zero-width characters
// escaped, the rest as Line makes it.
func TestColumnEscapesWhatIsNotOneColumn(t *testing.T) {
	for in, want := range map[string]string{
		"atk/plain":        "atk/plain",
		"fine/ünïcödé ✓ Ω": "fine/ünïcödé ✓ Ω",
		"atk/日本":           `atk/\u65e5\u672c`,
		"atk/e\u0301":      `atk/e\u0301`,
		"atk/👍":            `atk/\u1f44d`,
		"atk/zw\u200b":     `atk/zw\u200b`,
		"atk\x1b[2J":       `atk\u001b[2J`,
		"x · a":            `x \u00b7 a`,
	} {
		if got := Column(in); got != want {
			t.Errorf("Column(%q) = %q, want %q", in, got, want)
		}
	}
}

// ShellWord keeps a plain value as it is and makes anything else one
// quoted word: the compose `user` that ran `touch` when the shown docker
// run was pasted.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"1000:1000":                "1000:1000",
		"bridge":                   "bridge",
		"headroom-task/x:ab12":     "headroom-task/x:ab12",
		"":                         "''",
		"0 $(touch /tmp/PWNED) x":  "'0 $(touch /tmp/PWNED) x'",
		"it's":                     `'it'\''s'`,
		"a`id`":                    "'a`id`'",
		"x;rm -rf /":               "'x;rm -rf /'",
		"type=volume,dst=/app dir": "'type=volume,dst=/app dir'",
		"~root":                    "'~root'",
		"*":                        "'*'",
	} {
		if got := ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %s, want %s", in, got, want)
		}
	}
	out, err := exec.Command("sh", "-c", "printf %s "+ShellWord("0 $(echo PWNED) 'x' \\ `y`")).Output()
	if err != nil || string(out) != "0 $(echo PWNED) 'x' \\ `y`" {
		t.Errorf("the shell read %q (%v)", out, err)
	}
}

// Hangul spelt in conjoining jamo is composed into syllables, and a
// jamo that composes into none is escaped: a terminal draws a run of
// them otherwise than a layout counts it (TestCardBordersHoldWithConjoiningJamo
// in ui).
func TestConjoiningJamoAreComposedOrEscaped(t *testing.T) {
	for in, want := range map[string]string{
		"\u1100\u1161\u11a8 \u1112\u1161\u11ab": "각 한",
		"\uac00\u11a8":                          "각", // a syllable and a final consonant
		"\u1100\u1100x":                         `\u1100\u1100x`,
		"\u1161":                                `\u1161`,
		"\ua960\ud7b0 e\u0301":                  `\ua960\ud7b0 é`,
		"plain 한국어":                             "plain 한국어",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		if Is(in) != (in == want) {
			t.Errorf("Is(%q) = %v", in, Is(in))
		}
	}
	var b strings.Builder
	w := Writer(&b)
	w.Write([]byte("ok \u1100\u1161\u11a8\n\u11a8\n"))
	w.Flush()
	if b.String() != "ok 각\n\\u11a8\n" {
		t.Errorf("Writer wrote %q", b.String())
	}
}
