package replay

import (
	"fmt"
	"github.com/headroom-eval/headroom/confine"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/printable"
)

// Recording is one recorded trial of another harness: what its agent did,
// in order, and how its harness graded it.
type Recording struct {
	// Harness is "harbor" or "terminal-bench"; Job the job (run)
	// directory; Trial the trial's own name there; Dir its directory.
	Harness string
	Job     string
	Trial   string
	Dir     string
	// Task is the task's name; TaskPath its directory as the job's
	// config named it ("" when the recording does not say).
	Task     string
	TaskPath string
	Agent    string
	Model    string
	// Outcome is the harness's verdict: "passed", "failed" or "" when
	// it gave none (an error before the verifier).
	Outcome string
	// Terminal says the actions are keys typed into one terminal
	// session (terminus, terminal-bench); otherwise each is a shell
	// tool's command run on its own.
	Terminal bool
	Actions  []Action
	// Notes say what the recording lacked and how the replay makes up
	// for it ("no cast: no think time").
	Notes []string
	// ThinkCapped says which gaps CapThink cut ("" when none).
	ThinkCapped string
	// from is the file the actions were read from, fromID its identity:
	// two trials' actions from one file are one recording given twice.
	from   string
	fromID confine.ID
}

// Action is one recorded action.
type Action struct {
	// Keys are what the harness typed (tmux key names or literal text),
	// for a terminal recording; Command the shell tool's command
	// otherwise.
	Keys    []string
	Command string
	// Wait is how long the harness waited after typing before it looked
	// (terminus' duration); Blocking, that it waited for the command to
	// end (terminal-bench's `; tmux wait -S done`).
	Wait     time.Duration
	Blocking bool
	// Think is the time from the end of this action's wait to the next
	// action: the model's latency, as recorded (0 for the last).
	Think time.Duration
	// Output is what the harness saw after the action ("" when it did
	// not keep it); Exit its exit status when the tool reported one.
	Output string
	Exit   *int
	// Step is where in the recording the action is ("step 12 call 2",
	// "commands.txt:7"), for messages.
	Step string
}

// Label is the action as a step is named: its command's first line, cut
// to 60 characters ("pip install pandas", "C-c", "wait 30s").
func (a Action) Label() string {
	text := a.Command
	if text == "" {
		var parts []string
		for _, k := range a.Keys {
			switch k {
			case "Enter", "\r", "\n":
				continue
			}
			parts = append(parts, k)
		}
		text = strings.Join(parts, " ")
	}
	text = strings.TrimSpace(text)
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		text = strings.TrimSpace(text[:i]) + " …"
	}
	if text == "" {
		return fmt.Sprintf("wait %s", (a.Wait + a.Think).Round(100*time.Millisecond))
	}
	if r := []rune(text); len(r) > 60 {
		text = string(r[:59]) + "…"
	}
	return text
}

// Refusal is a recorded trial that cannot be replayed, and why.
type Refusal struct {
	Dir string
	Why string
}

// Error is one line whatever the directory's name holds (a newline in a
// trial directory's name would start a line headroom did not write).
func (r Refusal) Error() string {
	return printable.Line(fmt.Sprintf("cannot replay %s: %s", r.Dir, r.Why))
}
