package workload

import (
	"strings"
	"testing"
)

func TestTmuxKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Enter", "\r"},
		{"C-c", "\x03"},
		{"C-d", "\x04"},
		{"^C", "\x03"},
		{"C-[", "\x1b"},
		{"M-x", "\x1bx"},
		{"M-Enter", "\x1b\r"},
		{"Up", "\x1b[A"},
		{"BSpace", "\x7f"},
		{"pip install pandas", "pip install pandas"},
		{"make\n", "make\n"},
		{"C-", "C-"},
		{"Ctrl", "Ctrl"},
	} {
		if got := TmuxKey(c.in); got != c.want {
			t.Errorf("TmuxKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCleanTerminal(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "hello\r\nworld\r\n", "hello\nworld\n"},
		{"colours", "\x1b[1;32mok\x1b[0m\r\n", "ok\n"},
		{"title", "\x1b]0;root@box: /app\x07root@box:/app# ls\r\n", "root@box:/app# ls\n"},
		{"progress bar", "  10%\r  50%\r 100%\r\n", " 100%\n"},
		{"cursor only return", "Downloading\r\n", "Downloading\n"},
		{"backspace", "lss\b \b\r\n", "ls\n"},
		{"bracketed paste", "\x1b[?2004hroot# \x1b[?2004l\r\n", "root# \n"},
		{"no newline", "root@box:/app# ", "root@box:/app# "},
	} {
		if got := CleanTerminal(c.in); got != c.want {
			t.Errorf("%s: CleanTerminal(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func FuzzCleanTerminal(f *testing.F) {
	f.Add("\x1b[1;32mok\x1b[0m\r\n 10%\r100%\n\x1b]0;t\x07x\b")
	f.Fuzz(func(t *testing.T, s string) {
		out := CleanTerminal(s)
		if strings.ContainsAny(out, "\x1b\r\b") {
			t.Fatalf("CleanTerminal(%q) kept control bytes: %q", s, out)
		}
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("CleanTerminal(%q) changed the line count: %q", s, out)
		}
	})
}
