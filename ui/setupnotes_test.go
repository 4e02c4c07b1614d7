package ui

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/themes"
)

// Past the two notes setup shows, the command that lists them all is
// shown whole, with the directory given, however narrow the screen: cut
// at its edge it read "…lists every file's" (a new user's).
func TestSetupNotesNameTheCommandWhole(t *testing.T) {
	problems := []string{"a/task.toml:3: bad", "b/task.toml:4: bad", "c/task.toml:5: bad", "d/task.toml:6: bad"}
	cmd := "headroom tasks validate /tmp/my-broken-tasks"
	for _, w := range []int{60, 120} {
		lines := setupNotes(problems, nil, cmd, w, themes.Plain().Styles)
		joined := ""
		for _, l := range lines {
			if width(l) > w {
				t.Errorf("width %d: line %q is wider", w, l)
			}
			joined += " " + strings.TrimSpace(l)
		}
		if !strings.Contains(joined, "… and 2 more skipped or warned about; `"+cmd+"` lists them all") {
			t.Errorf("width %d: %q", w, joined)
		}
	}
}
