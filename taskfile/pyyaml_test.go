package taskfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// terminal-bench reads task.yaml with PyYAML (YAML 1.1): headroom reads
// a key given twice, a base-60 number and a YAML 1.2 octal as it does.
func TestTaskYAMLReadAsPyYAMLReadsIt(t *testing.T) {
	for _, c := range []struct {
		yaml    string
		agent   time.Duration
		warning string // in the warnings
		err     string // refused, the error holding this
	}{
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 1:30\n", agent: 90 * time.Second,
			warning: "task.yaml:2: max_agent_timeout_sec: 1:30: a number in base 60 (YAML 1.1), read as 90, as terminal-bench reads it"},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 1:00:00.5\n", agent: 3600500 * time.Millisecond},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 30\nmax_agent_timeout_sec: 120\n", agent: 2 * time.Minute,
			warning: "task.yaml:2: max_agent_timeout_sec is given again at line 3: the last is read"},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 074\n", agent: 60 * time.Second},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 0x3C\n", agent: 60 * time.Second},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 0o74\n",
			err: "task.yaml:2: max_agent_timeout_sec: 0o74 is the text \"0o74\" to terminal-bench's YAML reader"},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 0X3C\n", err: "task.yaml:2: max_agent_timeout_sec: 0X3C is the text \"0X3C\""},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 0B111100\n", err: "task.yaml:2: max_agent_timeout_sec: 0B111100 is the text"},
		{yaml: "instruction: hi\nmax_agent_timeout_sec: 0b111100\n", agent: 60 * time.Second},
		// Quoted, it is the model's string "1:30", which it refuses.
		{yaml: "instruction: hi\nmax_agent_timeout_sec: \"1:30\"\n", err: "task.yaml:2: max_agent_timeout_sec takes a number"},
	} {
		tb := filepath.Join(t.TempDir(), "tb")
		if err := os.CopyFS(tb, os.DirFS("../examples/tasks/hello-old")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tb, "task.yaml"), []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := LoadTaskDir(tb)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.yaml, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		if l.Task.AgentTimeout != c.agent || !strings.Contains(strings.Join(l.Warnings, "\n"), c.warning) {
			t.Errorf("%q: agent timeout %s, warnings %q; want %s and %q", c.yaml, l.Task.AgentTimeout, l.Warnings, c.agent, c.warning)
		}
	}
}

func FuzzSexagesimal(f *testing.F) {
	for _, s := range []string{"1:30", "-1:00:00.5", "190:20:30", "1_0:0", "0:1", ":", "1:60"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := sexagesimal(s)
		if ok != pySexagesimal.MatchString(s) || v != v {
			t.Fatalf("%q: %v %v", s, v, ok)
		}
	})
}
