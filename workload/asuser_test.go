package workload

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// as mode becomes the user, as the step driver runs a step as it (its id,
// its HOME from /etc/passwd unless kept), then runs the command; an
// unknown user exits 126. It replaces the process, so it runs in a child
// of the test.
func TestAsModeRunsAsTheUser(t *testing.T) {
	if a := os.Getenv("HR_AS_ARGS"); a != "" {
		var args []string
		_ = json.Unmarshal([]byte(a), &args)
		etcPasswd, etcGroup = os.Getenv("HR_AS_PASSWD"), os.Getenv("HR_AS_GROUP")
		os.Exit(Main(args, os.Stdout, os.Stderr))
	}
	if os.Geteuid() != 0 {
		t.Skip("becomes another user: needs root")
	}
	dir := t.TempDir()
	passwd, group := filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"), 0o644)
	os.WriteFile(group, []byte("root:x:0:\nnogroup:x:65534:\n"), 0o644)
	run := func(args []string) (string, int) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAsModeRunsAsTheUser$")
		a, _ := json.Marshal(args)
		cmd.Env = append(os.Environ(), "HR_AS_ARGS="+string(a), "HR_AS_PASSWD="+passwd, "HR_AS_GROUP="+group, "HOME=/root")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return strings.TrimSpace(out.String()), code
	}
	show := []string{"sh", "-c", "echo $(id -u) $(id -g) $(id -G) $HOME"}
	for _, c := range []struct {
		args []string
		out  string
		code int
	}{
		{AsArgv("bin", "nobody", false, show)[1:], "65534 65534 65534 /nonexistent", 0},
		{AsArgv("bin", "nobody", true, show)[1:], "65534 65534 65534 /root", 0},
		{AsArgv("bin", "1234", false, show)[1:], "1234 0 0 /", 0},
		{AsArgv("bin", "ghost", false, show)[1:], "hr-workload as: unable to find user ghost: not in /etc/passwd", 126},
		{[]string{AsMode, "nobody", "sh"}, "usage: hr-workload as [--keep-home] USER -- ARGV...", 2},
	} {
		if out, code := run(c.args); out != c.out || code != c.code {
			t.Errorf("%q: %q exit %d, want %q exit %d", c.args, out, code, c.out, c.code)
		}
	}
}
