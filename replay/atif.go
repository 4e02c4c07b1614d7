package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// ATIF (Harbor's Agent Trajectory Interchange Format) as far as a replay
// reads it: the agent's steps, their timestamps, tool calls and what the
// tools returned.
type atifTrajectory struct {
	SchemaVersion string `json:"schema_version"`
	Agent         struct {
		Name      string `json:"name"`
		ModelName string `json:"model_name"`
	} `json:"agent"`
	Steps []atifStep `json:"steps"`
}

type atifStep struct {
	StepID    int    `json:"step_id"`
	Timestamp string `json:"timestamp"`
	Source    string `json:"source"`
	// IsCopiedContext marks a step repeated from before a context
	// summary: it did not run again.
	IsCopiedContext bool           `json:"is_copied_context"`
	ToolCalls       []atifToolCall `json:"tool_calls"`
	Observation     *struct {
		Results []struct {
			SourceCallID string          `json:"source_call_id"`
			Content      json.RawMessage `json:"content"`
		} `json:"results"`
	} `json:"observation"`
}

type atifToolCall struct {
	ID        string          `json:"tool_call_id"`
	Function  string          `json:"function_name"`
	Arguments json.RawMessage `json:"arguments"`
}

// terminalTool is terminus' tool: keys typed into its tmux pane.
const terminalTool = "bash_command"

// shellTools are other agents' shell tools, by the argument that holds
// the command.
var shellTools = map[string]string{
	"Bash": "command", "bash": "command", "execute_bash": "command", "shell": "command",
	"run_shell_command": "command", "exec_command": "cmd", "terminal": "command",
}

// quietTools change nothing in the container: a replay passes them by.
var quietTools = map[string]bool{
	"mark_task_complete": true, "task_complete": true, "finish": true, "submit": true,
	"think": true, "TodoWrite": true, "todo_write": true,
}

// terminusDefaultWait is terminus-2's duration when a command names none.
const terminusDefaultWait = time.Second

// parseATIF reads a trajectory into actions, or says why it cannot be
// replayed. where names the file for messages.
func parseATIF(data []byte, where string) (rec Recording, err error) {
	var t atifTrajectory
	if err := json.Unmarshal(data, &t); err != nil {
		return rec, fmt.Errorf("%s: not an ATIF trajectory: %v", where, err)
	}
	if !strings.HasPrefix(t.SchemaVersion, "ATIF-") {
		return rec, fmt.Errorf("%s: schema_version %q is not ATIF (want \"ATIF-v1.x\")", where, t.SchemaVersion)
	}
	rec.Agent, rec.Model = t.Agent.Name, t.Agent.ModelName
	other := map[string]int{}
	var stepAt []time.Time // per action: its step's timestamp
	var stepOf []int       // per action: its step's index
	for si, s := range t.Steps {
		if s.Source != "agent" || s.IsCopiedContext {
			continue
		}
		at, _ := parseStamp(s.Timestamp)
		outputs := atifOutputs(s)
		for ci, c := range s.ToolCalls {
			a := Action{Step: fmt.Sprintf("step %d call %d", s.StepID, ci+1)}
			var args map[string]any
			_ = json.Unmarshal(c.Arguments, &args)
			switch key, shell := shellTools[c.Function]; {
			case c.Function == terminalTool:
				keys, _ := args["keystrokes"].(string)
				a.Keys = []string{keys}
				a.Wait = terminusDefaultWait
				if d, ok := args["duration"].(float64); ok && d >= 0 {
					if d > maxRecordedSeconds {
						// 1e308 overflowed to a negative wait (the
						// twenty-ninth attacker's 4).
						return rec, fmt.Errorf("%s: step %d: %s call %d waits %g s, past any agent's time (at most %d s)", where, s.StepID, c.Function, ci+1, d, maxRecordedSeconds)
					}
					a.Wait = time.Duration(d * float64(time.Second))
				}
			case shell:
				cmd, _ := args[key].(string)
				if strings.TrimSpace(cmd) == "" {
					return rec, fmt.Errorf("%s: step %d: %s call %d has no %q argument", where, s.StepID, c.Function, ci+1, key)
				}
				a.Command = cmd
			case quietTools[c.Function]:
				continue
			default:
				other[c.Function]++
				continue
			}
			if out, ok := outputs[c.ID]; ok && c.ID != "" {
				a.Output = out
			} else if ci == len(s.ToolCalls)-1 || lastActing(s.ToolCalls[ci+1:]) {
				a.Output = outputs[""]
			}
			rec.Actions = append(rec.Actions, a)
			if err := tooMany(where, len(rec.Actions), len(rec.Actions)); err != nil {
				return rec, err
			}
			stepAt = append(stepAt, at)
			stepOf = append(stepOf, si)
		}
	}
	if len(other) > 0 {
		names := make([]string, 0, len(other))
		for n, k := range other {
			names = append(names, fmt.Sprintf("%s ×%d", n, k))
		}
		sort.Strings(names)
		return rec, fmt.Errorf("the agent used tools that are not a shell (%s): their effects are not commands a replay can run", strings.Join(names, ", "))
	}
	if len(rec.Actions) == 0 {
		return rec, fmt.Errorf("%s: no shell actions (no %s or shell tool calls in the agent's steps)", where, terminalTool)
	}
	terminal := slices.ContainsFunc(rec.Actions, func(a Action) bool { return a.Keys != nil })
	shell := slices.ContainsFunc(rec.Actions, func(a Action) bool { return a.Command != "" })
	if terminal && shell {
		return rec, fmt.Errorf("%s: the agent both typed keys and ran shell commands; a replay does one or the other", where)
	}
	rec.Terminal = terminal
	// Think time: from the end of a step's last wait to the next step's
	// timestamp (its model call), on the last action of the step.
	stamped := true
	for i := range rec.Actions {
		if stepAt[i].IsZero() {
			stamped = false
		}
		if i+1 == len(rec.Actions) || stepOf[i+1] == stepOf[i] {
			continue
		}
		var waited time.Duration
		for j := i; j >= 0 && stepOf[j] == stepOf[i]; j-- {
			waited += rec.Actions[j].Wait
		}
		if gap := stepAt[i+1].Sub(stepAt[i]) - waited; !stepAt[i].IsZero() && !stepAt[i+1].IsZero() && gap > 0 {
			rec.Actions[i].Think = gap
		}
	}
	if !stamped {
		rec.Notes = append(rec.Notes, "some steps have no timestamp: no think time before their next step")
	}
	if shell {
		rec.Notes = append(rec.Notes, "a shell tool's run time is not recorded apart from the model's: the think time includes the recorded command's own run")
	}
	return rec, nil
}

// lastActing says whether none of calls is an action (so the call before
// them is the step's last action, which a step-wide output belongs to).
func lastActing(calls []atifToolCall) bool {
	for _, c := range calls {
		if _, shell := shellTools[c.Function]; shell || c.Function == terminalTool {
			return false
		}
	}
	return true
}

// atifOutputs are a step's observation contents by the call they answer
// ("" for a result that names none: the step's whole output).
func atifOutputs(s atifStep) map[string]string {
	out := map[string]string{}
	if s.Observation == nil {
		return out
	}
	for _, r := range s.Observation.Results {
		text := contentText(r.Content)
		if prev, ok := out[r.SourceCallID]; ok {
			text = prev + "\n" + text
		}
		out[r.SourceCallID] = text
	}
	return out
}

// contentText is an observation's content: a string, or ATIF's list of
// parts ({"type": "text", "text": ...}).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// parseStamp reads ISO 8601 timestamps as Harbor writes them, with or
// without a zone (older releases wrote none: UTC).
func parseStamp(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not ISO 8601", s)
}
