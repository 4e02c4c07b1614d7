// Package printable makes text that came from a task (its name, what its
// commands printed, what its processes are called, a record someone
// edited) safe to put on a terminal: no byte of it can move the cursor,
// clear the screen, set the title, start a new line or reorder what is
// shown. Every face calls it; the log file keeps the text as it came.
package printable

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Line is s as one line: every control character (C0, DEL, C1, the
// newline and carriage return among them), every bidirectional-text
// control and every character drawn as nothing (Invisible) escaped as
// JSON writes it (\u001b, \n, \u202e, \u200b), every byte that is not
// UTF-8 as \xff, and tabs expanded to spaces.
func Line(s string) string { return clean(s, oneLine) }

// Text is s with the newlines kept (a block of lines), everything else
// as Line makes it.
func Text(s string) string { return clean(s, withNewlines) }

// Is says whether s is printable as it is: Line(s) == s.
func Is(s string) bool { return safeUpTo(s, oneLine) == len(s) }

// First returns the first rune of s that Line would escape, if any
// (utf8.RuneError for a byte that is not UTF-8), for a message that
// names it.
func First(s string) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return r, true
			}
		}
		if r == '\t' || unsafeIn(s, i, r) {
			return r, true
		}
	}
	return 0, false
}

// unsafe says whether a terminal may act on r rather than show it.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true // C0 (newline, ESC, BEL...), DEL, C1 (CSI, OSC...)
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional controls: they reorder what follows
	case r == 0x2028, r == 0x2029:
		return true // line and paragraph separators
	case r < 0xa0:
		return false
	}
	return Invisible(r) || ConjoiningJamo(r)
}

// ConjoiningJamo says whether r is a Hangul conjoining jamo (U+1100–U+11FF,
// U+A960–U+A97F, U+D7B0–U+D7FF): the letters a syllable is spelt with
// when it is not one precomposed character. How wide a run of them is
// drawn depends on the terminal (one syllable of two columns, or each
// letter on its own, some of none) while the console's layout counts
// them otherwise, so a step's output holding them broke its card's
// borders. Text is composed (NFC) first, which makes every modern
// syllable one precomposed character, two columns wide everywhere; a
// jamo left over (an old letter, one standing alone) is escaped
// (\u1161) as an invisible character is.
func ConjoiningJamo(r rune) bool {
	return r >= 0x1100 && r <= 0x11ff || r >= 0xa960 && r <= 0xa97f || r >= 0xd7b0 && r <= 0xd7ff
}

// hasJamo says whether s holds a conjoining jamo.
func hasJamo(s string) bool { return strings.IndexFunc(s, ConjoiningJamo) >= 0 }

// unsafeIn is unsafe for the rune r at s[i:], with the one exception
// its neighbours make: an emoji's own joiner or presentation selector
// (emojiJoin).
func unsafeIn(s string, i int, r rune) bool {
	if !unsafe(r) {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
	return !emojiJoin(prev, r, next)
}

func lastRune(p []byte) rune  { r, _ := utf8.DecodeLastRune(p); return r }
func firstRune(p []byte) rune { r, _ := utf8.DecodeRune(p); return r }

// emojiJoin says whether the invisible r is part of an emoji: the zero
// width joiner between two pictographs (👩‍💻) or a variation selector
// after one (❤️). A pictograph is drawn, so these cannot pile up unseen:
// one at most beside each.
func emojiJoin(prev, r, next rune) bool {
	switch r {
	case 0x200d:
		return pictograph(prev) && pictograph(next)
	case 0xfe0e, 0xfe0f:
		return pictograph(prev)
	}
	return false
}

// pictograph is a symbol an emoji sequence is made of (a skin tone
// modifier among them).
func pictograph(r rune) bool {
	return r >= 0x2000 && r != utf8.RuneError && (unicode.Is(unicode.So, r) || r >= 0x1f3fb && r <= 0x1f3ff)
}

// Invisible says whether r is drawn as nothing: a format character
// (Unicode category Cf: U+200B zero width space, U+200D joiner, U+2060
// word joiner, U+FEFF, U+00AD soft hyphen, the tag characters…), a
// variation selector or another default-ignorable code point (U+034F,
// the Hangul fillers U+115F, U+1160, U+3164, U+FFA0). A terminal shows no
// column for it while a table pads by runes, so 21 of them in a task's
// name moved its row's cells one column to the left, under the header
// before theirs; they are escaped (\u200b) as control characters are.
func Invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// newlines says whether text keeps its newlines (a block of lines) or
// escapes them (one line).
type newlines bool

const (
	oneLine      newlines = false
	withNewlines newlines = true
)

// safeUpTo is how long a prefix of s needs no change: printable ASCII,
// runes no terminal acts on, and newlines if they are kept.
func safeUpTo(s string, nl newlines) int {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f, c == '\n' && nl == withNewlines:
			i++
			continue
		case c < 0x80:
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeIn(s, i, r) {
			return i
		}
		i += size
	}
	return len(s)
}

func clean(s string, nl newlines) string {
	i := safeUpTo(s, nl)
	if i == len(s) {
		return s // the usual case: nothing to change, nothing copied
	}
	if hasJamo(s[i:]) {
		// Hangul spelt in jamo: composed into syllables (ConjoiningJamo).
		s = norm.NFC.String(s)
		if i = safeUpTo(s, nl); i == len(s) {
			return s
		}
	}
	// Tab stops count from the start of the line.
	col := utf8.RuneCountInString(s[strings.LastIndexByte(s[:i], '\n')+1 : i])
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
			col += 4
		case r == '\n' && nl == withNewlines:
			b.WriteByte('\n')
			col = 0
		case r == '\t':
			n := 8 - col%8
			b.WriteString("        "[:n])
			col += n
		case unsafeIn(s, i, r):
			e := escape(r)
			b.WriteString(e)
			col += len(e)
		default:
			b.WriteString(s[i : i+size])
			col++
		}
		i += size
	}
	return b.String()
}

func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	}
	// As JSON writes it, so that a JSON document passed through stays
	// valid and means the same (JSON leaves DEL, C1 and bidi raw).
	return fmt.Sprintf(`\u%04x`, r)
}

// Writer passes what is written to w as Text makes it, tabs kept: for a
// command's whole output. A UTF-8 sequence cut between two writes is
// held until its end arrives (or Flush).
func Writer(w io.Writer) *TextWriter { return &TextWriter{w: w} }

// TextWriter is what Writer returns.
type TextWriter struct {
	w    io.Writer
	held []byte
}

func (t *TextWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(t.held) > 0 {
		p = append(t.held, p...)
		t.held = nil
	}
	// A rune cut at the end waits for the next write.
	if k := incompleteTail(p); k > 0 {
		t.held = append([]byte(nil), p[len(p)-k:]...)
		p = p[:len(p)-k]
	}
	if safeText(p) == len(p) {
		// The usual case (a JSON report is hundreds of MB of it): nothing
		// to change, written as it is, nothing copied.
		if _, err := t.w.Write(p); err != nil {
			return 0, err
		}
		return n, nil
	}
	var b strings.Builder
	start := 0
	for j := 0; j <= len(p); j++ {
		if j == len(p) || p[j] == '\t' {
			b.WriteString(clean(string(p[start:j]), withNewlines))
			if j < len(p) {
				b.WriteByte('\t')
			}
			start = j + 1
		}
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a held partial rune (escaped: it never completed).
func (t *TextWriter) Flush() error {
	if len(t.held) == 0 {
		return nil
	}
	h := t.held
	t.held = nil
	_, err := io.WriteString(t.w, clean(string(h), withNewlines))
	return err
}

// incompleteTail is how many bytes at the end of p start a UTF-8
// sequence that has not ended.
// safeText is how long a prefix of p the Writer passes unchanged:
// safeUpTo's with newlines and tabs kept, eight bytes at a time where
// they are printable ASCII.
func safeText(p []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i := 0; i < len(p); {
		if i+8 <= len(p) {
			x := binary.LittleEndian.Uint64(p[i:])
			below := (x - 0x20*ones) &^ x & highs // a byte under 0x20
			above := ((x + ones) | x) & highs     // a byte over 0x7e
			if below|above == 0 {
				i += 8
				continue
			}
		}
		c := p[i]
		switch {
		case c >= 0x20 && c < 0x7f, c == '\n', c == '\t':
			i++
			continue
		case c < 0x80:
			return i
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r) && !emojiJoin(lastRune(p[:i]), r, firstRune(p[i+size:])) {
			return i
		}
		i += size
	}
	return len(p)
}

func incompleteTail(p []byte) int {
	for k := 1; k <= 3 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte: is its sequence whole?
			if utf8.FullRune(p[len(p)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

// Styled is a block a screen drew: newlines and the colour sequences a
// style writes (SGR: ESC [ digits and ; or : ... m) are kept, everything
// else as Text makes it. It is the console's last line of defence: a
// task's text reaches a screen already made printable, but a field
// missed on the way can carry nothing out but colour.
func Styled(s string) string {
	if !needsStyledChange(s) {
		return s // the usual frame: nothing copied
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '[' {
			j++
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				b.WriteString(clean(s[start:i], withNewlines))
				b.WriteString(s[i : j+1])
				start, i = j+1, j
			}
		}
	}
	b.WriteString(clean(s[start:], withNewlines))
	return b.String()
}

// needsStyledChange says whether Styled would change s.
func needsStyledChange(s string) bool {
	for i := 0; i < len(s); {
		i += safeUpTo(s[i:], withNewlines)
		if i == len(s) {
			return false
		}
		if s[i] != 0x1b || i+1 >= len(s) || s[i+1] != '[' {
			return true
		}
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
			j++
		}
		if j == len(s) || s[j] != 'm' {
			return true
		}
		i = j + 1
	}
	return false
}
