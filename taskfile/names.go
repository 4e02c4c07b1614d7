package taskfile

import (
	"fmt"
	"unicode/utf8"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
)

// validateTask is model.Task.Validate, and then the names a task file
// gives (the task's, its agents', their steps', its phases'): each is
// shown on every screen and line headroom prints and keys the matrix, so
// each must be one line of printable text. A name holding an escape
// sequence cleared the screen and set the terminal's title in `tasks
// list`, and a newline forged a row.
func validateTask(t *model.Task) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := printableName("[task] name", t.Name); err != nil {
		return err
	}
	for _, a := range t.Agents {
		if err := printableName("agent name", a.Name); err != nil {
			return err
		}
		for _, s := range a.Steps {
			if err := printableName("step name", s.Name); err != nil {
				return err
			}
		}
	}
	for _, p := range t.Phases {
		if err := printableName("[[steps]] name", p.Name); err != nil {
			return err
		}
	}
	return nil
}

func printableName(what, name string) error {
	r, bad := printable.First(name)
	if !bad {
		return nil
	}
	which := fmt.Sprintf("the control character U+%04X", r)
	if r == utf8.RuneError {
		which = "a byte that is not UTF-8"
	}
	return fmt.Errorf("%s %q holds %s: a name is shown on every screen and line headroom prints, so it must be one line of printable text; remove it", what, name, which)
}
