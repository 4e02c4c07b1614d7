package workload

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestEnvArgs(t *testing.T) {
	argv := EnvArgv("/hr-workload", []string{"A=1", "B=x=y"}, []string{"/hr-workload", "run", "--step", "s"})
	env, cmd, err := envArgs(argv[2:])
	if err != nil || !slices.Equal(env, []string{"A=1", "B=x=y"}) || !slices.Equal(cmd, []string{"/hr-workload", "run", "--step", "s"}) {
		t.Fatalf("%q: env %q argv %q %v", argv, env, cmd, err)
	}
	for _, bad := range [][]string{{"A=1"}, {"A=1", "--"}, {"noequals", "--", "x"}, {"=v", "--", "x"}} {
		if _, _, err := envArgs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// env mode runs the command with the variables added (it replaces the
// process, so it runs in a child of the test), and a missing command
// exits 127: the trial's own error, as a shell's.
func TestEnvModeRuns(t *testing.T) {
	if a := os.Getenv("HR_ENV_ARGS"); a != "" {
		var args []string
		_ = json.Unmarshal([]byte(a), &args)
		os.Exit(Main(args, os.Stdout, os.Stderr))
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	run := func(args []string) (string, int) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvModeRuns$")
		a, _ := json.Marshal(args)
		cmd.Env = append(os.Environ(), "HR_ENV_ARGS="+string(a))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return out.String(), code
	}
	out, code := run(EnvArgv("bin", []string{"HR_X=42"}, []string{sh, "-c", "echo x=$HR_X"})[1:])
	if code != 0 || strings.TrimSpace(out) != "x=42" {
		t.Errorf("env ran: %q exit %d", out, code)
	}
	out, code = run(EnvArgv("bin", nil, []string{"no-such-command-hr"})[1:])
	if code != 127 || !strings.Contains(out, "no-such-command-hr") {
		t.Errorf("missing command: %q exit %d", out, code)
	}
}
