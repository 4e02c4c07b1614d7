package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/workload"
)

// terminal-bench 1 keeps, per trial, commands.txt (each line the keys one
// send-keys call typed into the agent's tmux pane, as a Python list:
// ['pip install pandas', 'Enter']) and sessions/agent.cast, the pane
// recorded by asciinema with --stdin: every typed key ("i" events) and
// every output ("o") with its time. The cast gives the timing and what
// the agent saw; commands.txt alone gives the keys.

// tbBlocking is what terminal-bench appends to a blocking command: the
// harness waits on tmux for the command's end.
const tbBlocking = "; tmux wait -S done"

// testsScript is the harness's tests, run in the agent's own pane for a
// task that asks (run_tests_in_same_shell): from there on the keys are
// not the agent's.
const testsScript = "/tests/run-tests.sh"

// installedAgentPrefix starts an installed agent's setup in the pane:
// such a run typed only its agent's invocation; the agent's own actions
// happened inside it, unrecorded.
const installedAgentPrefix = "source /installed-agent/"

// castEvent is one asciinema v2 event.
type castEvent struct {
	At   time.Duration
	Kind string // "i" or "o"
	Data string
}

// parseCast reads an asciinema v2 recording's events.
func parseCast(data []byte, where string) ([]castEvent, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var events []castEvent
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			var head struct {
				Version int `json:"version"`
			}
			if err := json.Unmarshal(sc.Bytes(), &head); err != nil || head.Version != 2 {
				return nil, fmt.Errorf("%s:1: not an asciinema v2 header (want {\"version\": 2, ...})", where)
			}
			continue
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil || len(raw) != 3 {
			return nil, fmt.Errorf("%s:%d: not an event [time, kind, data]", where, line)
		}
		var at float64
		var e castEvent
		if json.Unmarshal(raw[0], &at) != nil || json.Unmarshal(raw[1], &e.Kind) != nil || json.Unmarshal(raw[2], &e.Data) != nil || at < 0 || at > maxRecordedSeconds {
			return nil, fmt.Errorf("%s:%d: not an event [seconds, \"i\"|\"o\", text]", where, line)
		}
		e.At = time.Duration(at * float64(time.Second))
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return events, nil
}

// castActions are the keys typed in a cast, one action per send-keys,
// with the harness's own lines (the first clear, the closing C-d) left
// out, and what the pane showed after each.
func castActions(events []castEvent, where string) ([]Action, error) {
	var inputs []int
	for i, e := range events {
		if e.Kind == "i" {
			inputs = append(inputs, i)
		}
	}
	if err := tooMany(where, len(inputs), 2*len(inputs)); err != nil {
		return nil, err
	}
	if len(inputs) > 0 && events[inputs[0]].Data == "clear\r" {
		inputs = inputs[1:]
	}
	for i, at := range inputs {
		if strings.HasPrefix(events[at].Data, "bash "+testsScript) {
			inputs = inputs[:i]
			break
		}
	}
	for len(inputs) > 0 && events[inputs[len(inputs)-1]].Data == "\x04" {
		inputs = inputs[:len(inputs)-1]
	}
	actions := make([]Action, 0, len(inputs))
	for n, i := range inputs {
		e := events[i]
		a := Action{Keys: []string{e.Data}, Step: fmt.Sprintf("agent.cast input %d", n+1)}
		if text, ok := strings.CutSuffix(e.Data, tbBlocking+"\r"); ok {
			a.Keys, a.Blocking = []string{text, "Enter"}, true
		}
		end := len(events)
		if n+1 < len(inputs) {
			end = inputs[n+1]
		}
		var out strings.Builder
		lastOut := e.At
		for _, o := range events[i+1 : end] {
			if o.Kind == "o" {
				out.WriteString(o.Data)
				lastOut = o.At
			}
		}
		a.Output = workload.CleanTerminal(out.String())
		if n+1 < len(inputs) {
			next := events[inputs[n+1]].At
			// A blocking command's end is its last output; the rest is
			// the model's. Otherwise the keys came at their offsets,
			// whatever ran: the whole gap is kept.
			if a.Blocking {
				a.Think = max(0, next-lastOut)
			} else {
				a.Think = max(0, next-e.At)
			}
		}
		actions = append(actions, a)
	}
	return actions, nil
}

// commandsActions are commands.txt's lines as actions, the harness's own
// lines (the recorder's start and clear, the tests' part, C-d) left out.
func commandsActions(data []byte, where string) ([]Action, error) {
	var actions []Action
	typed := 0
	for n, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		keys, err := parsePyStrings(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", where, n+1, err)
		}
		typed += len(keys)
		if err := tooMany(where, len(actions)+1, typed); err != nil {
			return nil, err
		}
		first := ""
		if len(keys) > 0 {
			first = keys[0]
		}
		switch {
		case strings.HasPrefix(first, "asciinema rec") && strings.Contains(first, "tests.cast"),
			strings.Contains(strings.Join(keys, ""), "bash "+testsScript):
			return actions, nil // the tests begin: the agent's part is over
		case strings.HasPrefix(first, "asciinema rec"):
			continue
		case len(actions) == 0 && first == "clear":
			continue
		case len(keys) == 1 && first == "C-d":
			continue
		}
		// Without the cast's timing, each command waits for its prompt,
		// as a blocking one did: keys typed ahead of a running command
		// would charge its memory to a later action.
		actions = append(actions, Action{Keys: keys, Blocking: true, Step: fmt.Sprintf("commands.txt:%d", n+1)})
	}
	return actions, nil
}

// parsePyStrings reads a Python list of string literals, as
// terminal-bench writes a send-keys call's keys: ['ls -la', 'Enter'].
func parsePyStrings(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("not a list of keys (want ['keys', 'Enter'])")
	}
	rs := []rune(s[1 : len(s)-1])
	var out []string
	i := 0
	skip := func() {
		for i < len(rs) && (rs[i] == ' ' || rs[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i >= len(rs) {
			return out, nil
		}
		q := rs[i]
		if q != '\'' && q != '"' {
			return nil, fmt.Errorf("column %d: want a quoted string", i+2)
		}
		i++
		var b strings.Builder
		closed := false
		for i < len(rs) {
			c := rs[i]
			i++
			if c == q {
				closed = true
				break
			}
			if c != '\\' || i >= len(rs) {
				b.WriteRune(c)
				continue
			}
			e := rs[i]
			i++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteRune(e)
			case 'x':
				if i+2 <= len(rs) {
					var v byte
					if _, err := fmt.Sscanf(string(rs[i:i+2]), "%02x", &v); err == nil {
						b.WriteByte(v)
						i += 2
						continue
					}
				}
				return nil, fmt.Errorf("column %d: bad \\x escape", i+1)
			default:
				b.WriteByte('\\')
				b.WriteRune(e)
			}
		}
		if !closed {
			return nil, fmt.Errorf("a string is not closed")
		}
		out = append(out, b.String())
		skip()
		if i < len(rs) {
			if rs[i] != ',' {
				return nil, fmt.Errorf("column %d: want , between keys", i+2)
			}
			i++
		}
	}
}
