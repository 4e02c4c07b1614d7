// Package doccheck checks the docs against the code: the layout in
// docs/DEVELOPING.md names every package, and the README and
// docs/COMMANDS.md name every outcome and every cause glyph.
package doccheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

const module = "github.com/headroom-eval/headroom"

func read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Every package of the module has a line in docs/DEVELOPING.md's layout
// (a parent's line covers none of its children: each says its own job).
func TestLayoutNamesEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	doc := read(t, "docs/DEVELOPING.md")
	start := strings.Index(doc, "## Layout")
	if start < 0 {
		t.Fatal("docs/DEVELOPING.md has no Layout section")
	}
	layout := doc[start:]
	for _, pkg := range strings.Fields(string(out)) {
		dir := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if dir == "" {
			continue // main.go: the README's subject
		}
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(dir) + `/?\s`)
		if !line.MatchString(layout) {
			t.Errorf("docs/DEVELOPING.md's layout has no line for %s/", dir)
		}
	}
}

// The README's matrix glyphs and docs/COMMANDS.md's outcomes name every
// outcome and cause the code has (model.OutcomeTable, model.Causes).
func TestDocsNameEveryOutcomeAndCause(t *testing.T) {
	readme, commands := read(t, "README.md"), read(t, "docs/COMMANDS.md")
	for _, s := range model.OutcomeTable {
		if s.Outcome == model.Cancelled {
			continue // counted apart, never a cell's glyph
		}
		if !named(readme, s.Glyph) {
			t.Errorf("README.md does not name the glyph %q of %s", s.Glyph, s.Outcome)
		}
		if !strings.Contains(commands, "`"+string(s.Outcome)+"` (`"+s.Glyph+"`") {
			t.Errorf("docs/COMMANDS.md does not name %s with its glyph %q", s.Outcome, s.Glyph)
		}
	}
	for _, c := range model.Causes {
		if g := c.Glyph(); g != "" && !named(readme, g) {
			t.Errorf("README.md does not name the glyph %q of the cause %s", g, c)
		}
	}
}

// named says whether doc names glyph as code followed by its words.
func named(doc, glyph string) bool {
	return regexp.MustCompile("`" + regexp.QuoteMeta(glyph) + "`\\s").MatchString(doc)
}
