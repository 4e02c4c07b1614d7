package docker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
)

// gradedTask writes a Harbor task whose oracle writes the answer and then
// does what solve says, and loads it with its oracle alone.
func gradedTask(t *testing.T, name, memory, agentTimeout, solve string) model.Task {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files := map[string]string{
		"task.toml": "schema_version = \"1.1\"\n[task]\nname = \"test/" + name + "\"\n[agent]\ntimeout_sec = " + agentTimeout + "\n[verifier]\ntimeout_sec = 30.0\n" +
			"[environment]\ncpus = 1\nmemory_mb = " + memory + "\nallow_internet = false\n",
		"instruction.md":         "Write 42 to /app/answer.\n",
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nWORKDIR /app\n",
		"solution/solve.sh":      "#!/bin/bash\necho 42 > /app/answer\n" + solve,
		"tests/test.sh":          "#!/bin/bash\nif grep -qx 42 /app/answer; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
	}
	return harborTaskOf(t, dir, files)
}

// harborTaskOf writes files (paths under dir) as a Harbor task and loads
// it with its oracle alone, its image built.
func harborTaskOf(t *testing.T, dir string, files map[string]string) model.Task {
	t.Helper()
	writeTaskFiles(t, dir, files)
	return loadTaskAt(t, dir, taskfile.AgentOracle)
}

// writeTaskFiles writes files (paths under dir, their directories made),
// executable.
func writeTaskFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// An agent that did its work and then ran past its time limit, exited
// non-zero, or lost a process to the OOM killer while its container lived
// is graded, as Harbor and terminal-bench grade it: the verifier runs and
// its reward stands, and what happened is named beside the pass.
func TestAnAgentsFinishedWorkIsGradedWhateverEndedIt(t *testing.T) {
	needEngine(t)
	needDebian(t)
	cases := []struct {
		name, memory, timeout, solve string
		outcome                      model.Outcome
		cause                        model.Cause
		reason                       string
	}{
		{"graded-timeout", "256", "4.0", "sleep 600\n", model.PassedAfterTimeout, model.CauseAgentTimeout,
			"the agent ran past its time limit (4s) in step sleep 600; the verifier, run after it as Harbor and terminal-bench run it, passed"},
		{"graded-exit", "256", "120.0", "exit 3\n", model.Passed, model.CauseNone, ""},
		{"graded-oom", "64", "120.0", "python3 -c 'x = bytearray(200 * 1024 * 1024)'\necho still here\n", model.PassedAfterOOM, model.CauseOwnLimit,
			"verifier passed after 1 OOM kill(s), first in step python3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := gradedTask(t, c.name, c.memory, c.timeout, c.solve)
			results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
			r := results[0]
			for _, s := range r.Steps {
				t.Logf("%s %s: exit %s timed out %v kills %d", s.Phase, s.Name, s.ExitText(), s.TimedOut, s.OOMKills)
			}
			if r.Outcome != c.outcome || r.Cause != c.cause || !strings.Contains(r.Reason, c.reason) {
				t.Errorf("%s/%s (%s), want %s/%s (%q)", r.Outcome, r.Cause, r.Reason, c.outcome, c.cause, c.reason)
			}
			if !r.Outcome.Success() || r.Reward == nil || *r.Reward != 1 {
				t.Errorf("reward %v: the verifier must have judged the agent's answer", r.Reward)
			}
		})
	}
}

// The built-in workload's agent writes its answer, then works on past its
// time limit: its step is stopped alone and the verifier passes it.
func TestBuiltinAgentGradedAfterTimeout(t *testing.T) {
	needEngine(t)
	task := parseTask(t, enginetest.GradedAfterTimeout)
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	r := results[0]
	if r.Outcome != model.PassedAfterTimeout || r.Cause != model.CauseAgentTimeout {
		t.Errorf("%s/%s (%s), want passed-after-timeout", r.Outcome, r.Cause, r.Reason)
	}
	if n := len(r.Steps); n != 3 || !r.Steps[1].TimedOut || r.Steps[2].Phase != model.PhaseVerifier {
		t.Errorf("steps %+v: want answer, polish timed out, the verifier", r.Steps)
	}
}
