package replay

import (
	"os"
	"testing"
)

func FuzzParseATIF(f *testing.F) {
	if data, err := os.ReadFile("testdata/harbor-job/heavy-install__Ab3dE/agent/trajectory.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"schema_version": "ATIF-v1.5", "steps": [{"source": "agent", "timestamp": "x", "tool_calls": [{"function_name": "bash_command", "arguments": {"keystrokes": 3, "duration": -1}}], "observation": {"results": [{"content": [{"type": "text"}]}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parseATIF(data, "t.json")
		if err != nil {
			return
		}
		for _, a := range rec.Actions {
			if a.Think < 0 || a.Wait < 0 || (a.Keys == nil) == (a.Command == "") {
				t.Fatalf("action %+v", a)
			}
			_ = a.Label()
		}
	})
}

func FuzzParseCast(f *testing.F) {
	if data, err := os.ReadFile("testdata/tb-run/heavy-install/heavy-install.1-of-2.run/sessions/agent.cast"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := parseCast(data, "agent.cast")
		if err != nil {
			return
		}
		actions, _ := castActions(events, "agent.cast")
		for _, a := range actions {
			if a.Think < 0 || len(a.Keys) == 0 {
				t.Fatalf("action %+v", a)
			}
		}
	})
}

func FuzzParsePyStrings(f *testing.F) {
	f.Add(`['pip install pandas', 'Enter']`)
	f.Add(`["a\"b", '\x1b', 'C-c']`)
	f.Fuzz(func(t *testing.T, s string) { _, _ = parsePyStrings(s) })
}
