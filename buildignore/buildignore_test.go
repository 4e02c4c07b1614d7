package buildignore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	for _, c := range []struct {
		name    string
		make    func(t *testing.T, dir string)
		none    bool     // nil matcher, no error
		err     string   // an error naming this
		ignored []string // paths it leaves out
		sent    []string // paths it leaves in
	}{
		{name: "none", make: func(*testing.T, string) {}, none: true},
		{name: "only comments", make: write("# nothing\n\n"), none: true},
		{name: "patterns", make: write("*.local.cfg\nbuild/\n!build/keep\n"),
			ignored: []string{"a.local.cfg", "build/x"}, sent: []string{"b.cfg", "build/keep"}},
		{name: "a FIFO", make: func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, ".dockerignore"), 0o644); err != nil {
				t.Skip(err)
			}
		}, err: "not a regular file"},
		{name: "too large", make: write(strings.Repeat("x\n", MaxBytes)), err: "larger than"},
		{name: "a link out", make: func(t *testing.T, dir string) {
			out := filepath.Join(t.TempDir(), "ignore")
			os.WriteFile(out, []byte("*\n"), 0o644)
			if err := os.Symlink(out, filepath.Join(dir, ".dockerignore")); err != nil {
				t.Fatal(err)
			}
		}, err: "outside its context"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.make(t, dir)
			pm, err := Read(dir)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), ".dockerignore") {
					t.Fatalf("error %v; want one naming .dockerignore and %q", err, c.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			case c.none:
				if pm != nil {
					t.Fatalf("a matcher for %s", c.name)
				}
				return
			case pm == nil:
				t.Fatal("no matcher")
			}
			for _, p := range c.ignored {
				if out, _ := pm.MatchesOrParentMatches(p); !out {
					t.Errorf("%s sent; want it left out", p)
				}
			}
			for _, p := range c.sent {
				if out, _ := pm.MatchesOrParentMatches(p); out {
					t.Errorf("%s left out; want it sent", p)
				}
			}
		})
	}
}

func write(text string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		if err := os.WriteFile(filepath.Join(dir, ".dockerignore"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
