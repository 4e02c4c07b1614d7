package workload

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// consumed tells a shell that has read a typed line and waits for more
// (a builtin run, or a command reaped) from one that has not read it yet
// or runs a child: the quick blocking command's prompt, without the
// second's floor that made 150 replayed `true`s run past their limit.
func TestConsumedIsTheShellWaitingForMore(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no shell on this host")
	}
	cmd := exec.Command("sh")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &pane{shell: cmd.Process.Pid}
	until := func(what string, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("not %s within 10 s", what)
			}
		}
	}
	read0 := shellRead(p.shell)
	if read0 < 0 {
		t.Skip("/proc/<pid>/io cannot be read here")
	}
	if p.consumed(read0, 5) {
		t.Fatal("consumed before anything was typed")
	}
	line := "true\n"
	if _, err := in.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	until("consumed after a builtin", func() bool { return p.consumed(read0, int64(len(line))) })

	read0 = shellRead(p.shell)
	line = "sleep 30\n"
	if _, err := in.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	until("running a child", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p.shell, p.shell))
		return strings.TrimSpace(string(b)) != ""
	})
	if p.consumed(read0, int64(len(line))) {
		t.Error("consumed while the shell waits on its child")
	}
}
