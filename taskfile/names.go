package taskfile

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
)

// validateTask is model.Task.Validate, and then the names a task file
// gives (the task's, its agents', their steps', its phases'): each is
// shown on every screen and line headroom prints and keys the matrix, so
// each must be one line of printable text. A name holding an escape
// sequence cleared the screen and set the terminal's title in `tasks
// list`, and a newline forged a row. The task's and agents' must not
// hold the middle dot between a row's task and agent.
func validateTask(t *model.Task) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := printableName("[task] name", t.Name); err != nil {
		return err
	}
	what, fix := taskName(t)
	if err := noRowSeparator(what, fix, t.Name); err != nil {
		return err
	}
	for _, a := range t.Agents {
		if err := printableName("agent name", a.Name); err != nil {
			return err
		}
		if err := noRowSeparator("agent name", renameIt, a.Name); err != nil {
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
	return noNULs(t)
}

// rowSeparator is the character between a row's task and agent in every
// table headroom prints ("task · agent").
const rowSeparator = printable.RowSeparator

// noRowSeparator refuses a task or agent name holding the middle dot the
// tables put between a row's task and agent: task "att30/x" with agent
// "a · b" and task "att30/x · a" with agent "b" both printed as
// "att30/x · a · b", two identical rows, one passed and one failed (the
// thirtieth attacker's 4). The dot is refused anywhere, not only as " · ":
// task "x" with agent "· b" and task "x ·" with agent "b" both read
// "x · · b", and neither holds " · ". what names the field, fix what to do.
func noRowSeparator(what, fix, name string) error {
	if !strings.ContainsRune(name, rowSeparator) {
		return nil
	}
	return &nameError{r: rowSeparator, name: name, msg: fmt.Sprintf("%s %q holds the middle dot U+00B7, which the tables put between a row's task and agent (\"task · agent\"): with it two rows can print the same label (task \"x\" with agent \"a · b\" and task \"x · a\" with agent \"b\" both read \"x · a · b\"); %s", what, name, fix)}
}

// renameIt is what to do with a name a file gives holding the row
// separator.
const renameIt = "write another character (a hyphen, a slash) in its place"

// taskName is where a task's name came from, as an error names it, and
// what to do: a terminal-bench task.yaml's is its directory's, as is a
// Harbor task.toml's with no [task] name.
func taskName(t *model.Task) (what, fix string) {
	switch {
	case t.Format == model.FormatTerminalBench:
		return "the task's name (its directory's: task.yaml names no task)", "rename the directory"
	case t.Format == model.FormatHarbor && t.Dir != "" && filepath.Base(t.Dir) == t.Name:
		return "the task's name ([task] name, or its directory's where task.toml gives none)", "set [task] name, or rename the directory, without it"
	}
	return "[task] name", renameIt
}

// noNULs refuses a task that would hand a process a NUL byte: no exec
// takes one in an argument or the environment. The step then could not
// start ("exit 126", the agent's failure in the record) where Harbor's
// Python refuses it ("embedded null byte") and the trial errors, never
// graded (the fifteenth attacker's 8: instruction.md with a NUL, a
// [solution.env] value "a\u0000b").
func noNULs(t *model.Task) error {
	bad := func(where, s string) error {
		if strings.ContainsRune(s, 0) {
			return fmt.Errorf("%s holds a NUL byte, which no process can be given (exec refuses it, as Harbor's does): remove it", where)
		}
		return nil
	}
	if err := bad("the instruction (instruction.md)", t.Instruction); err != nil {
		return err
	}
	for _, e := range t.Env {
		if err := bad("environment variable "+strings.SplitN(e, "=", 2)[0], e); err != nil {
			return err
		}
		if err := named("the task's environment", e); err != nil {
			return err
		}
	}
	check := func(s model.Step) error {
		for _, e := range s.Env {
			if err := named(fmt.Sprintf("step %q's environment", s.Name), e); err != nil {
				return err
			}
			if err := bad(fmt.Sprintf("step %q's environment variable %s", s.Name, strings.SplitN(e, "=", 2)[0]), e); err != nil {
				return err
			}
		}
		for _, a := range s.Argv {
			if err := bad(fmt.Sprintf("step %q's command", s.Name), a); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range t.StepsOf() {
		if err := check(s); err != nil {
			return err
		}
	}
	return nil
}

// emptyEnvName is an environment variable with no name ("" = "x" in an
// env table): the engine refuses the container ("invalid environment
// variable: =x"), so every trial was an infra error, and a verifier's
// was dropped; validate said ok (the twenty-fifth attacker's 4). The
// loader puts the line that sets it before the message.
type emptyEnvName struct{ msg string }

func (e *emptyEnvName) Error() string { return e.msg }

// named refuses an environment entry ("NAME=value") with no name.
func named(where, entry string) error {
	if !strings.HasPrefix(entry, "=") {
		return nil
	}
	return &emptyEnvName{fmt.Sprintf("%s sets a variable with no name (\"\" = %q): the engine refuses it; give it a name, or remove the line", where, entry[1:])}
}

// nameWidth measures a name's characters as a terminal draws them (East
// Asian ambiguous characters narrow, as outside a CJK locale).
var nameWidth = &runewidth.Condition{StrictEmojiNeutral: true}

// nameError is a name refused for one character; the loader puts the
// line of the file that holds it before the message.
type nameError struct {
	r   rune
	msg string
	// name is the name refused where its quoted line is the one to
	// show, not the first line holding r (a description may hold it).
	name string
}

func (e *nameError) Error() string { return e.msg }

// CheckName is printableName for a name headroom takes from elsewhere
// than a task file (a recording's trial or task name, which a replay runs
// a task under): what names the field, name the name.
func CheckName(what, name string) error { return printableName(what, name) }

// printableName refuses a name holding what a terminal acts on (a
// control character, a bidirectional control), what it draws as nothing
// (U+200B and the other format characters, a combining mark) or across
// two columns (a wide character): tables pad a name by its characters,
// so 21 zero width spaces in a task's name moved its row's cells under
// the header before theirs, the 3x result shown as the 1x one.
func printableName(what, name string) error {
	r, bad := printable.First(name)
	which := ""
	switch {
	case bad && r == utf8.RuneError:
		which = "a byte that is not UTF-8"
	case bad && printable.Invisible(r):
		which = fmt.Sprintf("the invisible format character U+%04X", r)
	case bad && (r == 0x2028 || r == 0x2029 || r >= 0x200e && r <= 0x206f || r == 0x061c):
		which = fmt.Sprintf("the control character U+%04X (a bidirectional control or separator)", r)
	case bad:
		which = fmt.Sprintf("the control character U+%04X", r)
	default:
		for _, c := range name {
			switch w := nameWidth.RuneWidth(c); {
			case w == 0:
				r, which = c, fmt.Sprintf("the zero-width character U+%04X (a combining mark: write the letter precomposed)", c)
			case w > 1:
				r, which = c, fmt.Sprintf("the wide character U+%04X (two columns)", c)
			}
			if which != "" {
				break
			}
		}
		if which == "" {
			return nil
		}
	}
	return &nameError{r: r, msg: fmt.Sprintf("%s %q holds %s: a name is shown on every screen and line headroom prints, in tables padded by its characters, so it must be one line of printable text, each character one column wide; remove it", what, name, which)}
}

// runeLine is the 1-based line of data that holds r, as itself or as a
// TOML escape (\u200b, \U0000200B), or 0.
func runeLine(data []byte, r rune) int {
	if r == utf8.RuneError {
		return 0
	}
	esc := []string{string(r), fmt.Sprintf(`\u%04x`, r), fmt.Sprintf(`\U%08x`, r)}
	for i, line := range strings.Split(string(data), "\n") {
		low := strings.ToLower(line)
		for _, e := range esc {
			if strings.Contains(low, strings.ToLower(e)) {
				return i + 1
			}
		}
	}
	return 0
}
