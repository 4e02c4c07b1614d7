package cli_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A user's agent command runs in a task directory's container with the
// instruction and a passed-through key; the key reaches the container (the
// verifier finds it written) and appears nowhere headroom writes: not the
// terminal, the manifest, the trial records, the samples or the log.
func TestCommandAgentSecretIsNeverWritten(t *testing.T) {
	needEngine(t)
	needDebianImage(t)
	const key = "sk-test-7f3a9c2e1b5d"
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "--tasks-dir", "testdata/tbsecret", "--agent", "command",
		"--agent-command", `echo "using key $API_KEY"; head -c 20 "$HEADROOM_INSTRUCTION_FILE" > /app/instruction-seen.txt; printf '%s' "$API_KEY" > /app/key.txt`,
		"--pass-env", "API_KEY", "--ratios", "uncapped", "--repeats", "1", "--format", "json", "--out", out)
	cmd.Env = append(os.Environ(), "API_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"outcome": "passed"`) {
		t.Fatalf("the agent's trial did not pass (the key or instruction did not reach the container):\n%s", stdout.String())
	}
	for name, text := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.Contains(text, key) {
			t.Errorf("the key is in headroom's %s", name)
		}
	}
	redacted := false
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("the key is written in %s", p)
		}
		redacted = redacted || bytes.Contains(data, []byte("[redacted API_KEY]"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !redacted {
		t.Error("no record shows [redacted API_KEY] where the agent printed the key")
	}
}

func needDebianImage(t *testing.T) {
	t.Helper()
	r := headroom(t, "images", "build", "--real")
	if r.code != 0 {
		t.Fatalf("images build --real: exit %d\n%s", r.code, r.stderr)
	}
}

// A task that passes a host variable is refused before anything starts,
// naming the task and the variable: unless the user names the variable
// (--pass-env), and then while headroom does not have it.
func TestTaskNeedingAnUnsetVariableIsRefused(t *testing.T) {
	r := headroom(t, "run", "--tasks-dir", "../taskfile/testdata/tbdirs", "--tasks", "fit-small", "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "task terminal-bench/fit-small reads HR_TEST_JUDGE_KEY from headroom's environment into its container (its verifier, as OPENAI_API_KEY)") || !strings.Contains(r.stderr, "add --pass-env HR_TEST_JUDGE_KEY") {
		t.Errorf("not allowed: exit %d\n%s", r.code, r.stderr)
	}
	r = headroom(t, "run", "--tasks-dir", "../taskfile/testdata/tbdirs", "--tasks", "fit-small", "--pass-env", "HR_TEST_JUDGE_KEY", "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "--pass-env HR_TEST_JUDGE_KEY: HR_TEST_JUDGE_KEY is not set in headroom's environment") {
		t.Errorf("allowed, unset: exit %d\n%s", r.code, r.stderr)
	}
}

// agents list names the shipped definitions; show renders one's install
// and run steps with the key redacted; an unknown name is a usage error.
func TestAgentsListAndShow(t *testing.T) {
	r := headroom(t, "agents", "list")
	for _, name := range []string{"claude-code", "codex", "gemini-cli", "aider", "goose", "opencode"} {
		if r.code != 0 || !strings.Contains(r.stdout, name) {
			t.Errorf("agents list: exit %d, %s missing:\n%s", r.code, name, r.stdout)
		}
	}
	r = headroom(t, "agents", "show", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "npm install -g @openai/codex@latest") || !strings.Contains(r.stdout, "OPENAI_API_KEY=[redacted OPENAI_API_KEY]") {
		t.Errorf("agents show codex: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = headroom(t, "agents", "show", "nobody"); r.code != 2 || !strings.Contains(r.stderr, "no agent definition named nobody") {
		t.Errorf("unknown agent: exit %d %s", r.code, r.stderr)
	}
	if r = headroom(t, "run", "--agents", "claude-code", "--tasks-dir", "../examples/tasks", "--tasks", "fit-model", "--out", t.TempDir()); r.code != 2 || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY is not set") {
		t.Errorf("claude-code without its key: exit %d %s", r.code, r.stderr)
	}
}
