package ui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// width must agree with ansi.StringWidth on everything: it is only a
// shortcut.
func TestWidthAgreesWithAnsi(t *testing.T) {
	for _, s := range []string{
		"", "plain ascii", "\x1b[1;31mred\x1b[0m text", "█▒░ gauge ┆ 128M", "⣀⡠⠤ braille", "…·±–—→✓✗",
		"e\u0301 combining", "wide 日本語", "emoji 🙂", "\x1b]8;;http://x\x1b\\link", "tab\there", "\x1b[", "┃ OOM KILLED in install ┃",
		"✓ cd /app 0.0s", "a\u200db", "✓\ufe0f", "\x1b[ 0A", "\x1b[1 m",
	} {
		if got, want := width(s), ansi.StringWidth(s); got != want {
			t.Errorf("width(%q) = %d, ansi says %d", s, got, want)
		}
	}
}

func FuzzWidth(f *testing.F) {
	f.Add("█▒░ \x1b[31m┆\x1b[0m 128M…")
	f.Add("e\u0301✓\ufe0f")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := width(s), ansi.StringWidth(s); got != want {
			t.Fatalf("width(%q) = %d, ansi says %d", s, got, want)
		}
	})
}
