package docker

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process read between its fork and its exec shows its parent's command
// line under its parent's name; if its exec keeps the name (the step
// driver's fork becoming `hr-workload run --step …`, both `hr-workload`),
// the command line read then must not be kept for it: under load (5 of
// 36 kills at a load of 30-60) the kill was named `/hr-workload drive`,
// the driver's own command line, in the banner, the record and the
// headless lines. The race made to happen: a shell's subshell stalls
// between its fork and its exec on a FIFO, is read there, then execs a
// shell of another command line (the same name, sh), and is read again.
func TestAForkReadBeforeItsExecIsNotNamedAsItsParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The subshell is a fork of the shell: its command line is its
	// parent's until it execs `sh -c "sleep 60; exit 0"` (a second
	// command, so the shell does not exec sleep itself: the name stays sh).
	parent := exec.Command("sh", "-c", `(read x < "$1"; exec sh -c "sleep 60; exit 0") & echo $!; wait`, "sh", fifo)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-parent.Process.Pid, syscall.SIGKILL)
		parent.Process.Kill()
		parent.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("subshell pid %q: %v", line, err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	parentCmd := strings.Join(parent.Args, " ")
	s := &sandbox{}
	s.pw.cmds = map[procID]procCmd{}
	// Read a second after the fork: long enough that a command line read
	// then was taken for the process's own.
	p, _, _, ok := s.readProc(pid, time.Now().Add(time.Second))
	if !ok {
		t.Fatal("the stalled subshell cannot be read")
	}
	if p.Command != parentCmd || !p.Forked {
		t.Fatalf("between fork and exec: %q forked %v, want its parent's %q, forked", p.Command, p.Forked, parentCmd)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	want := "sh -c sleep 60; exit 0"
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ") == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the subshell did not exec within 10 s")
		}
		runtime.Gosched()
	}
	p, _, _, ok = s.readProc(pid, time.Now().Add(2*time.Second))
	if !ok || p.Command != want || p.Forked {
		t.Errorf("after its exec: %q forked %v (ok %v), want %q: the command line read before the exec was kept", p.Command, p.Forked, ok, want)
	}
}

// A process with no command line when read (mid-exec: the container's
// PID 1 as runc init became the step driver; a zombie here, which has
// none either) is read again next time, not kept as "[name]": the driver
// kept as [hr-workload] could not be told from its own forks, and a
// step's kill was named `/hr-workload drive` at a load of 27-36.
func TestANameWithoutACommandLineIsReadAgain(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip("no true:", err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; { // until it has exited, unreaped
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("true did not exit within 10 s")
		}
		runtime.Gosched()
	}
	s := &sandbox{}
	s.pw.cmds = map[procID]procCmd{}
	p, _, _, ok := s.readProc(pid, time.Now().Add(time.Second))
	if !ok || p.Command != "[true]" {
		t.Fatalf("read %+v %v, want it as [true]", p, ok)
	}
	if len(s.pw.cmds) != 0 {
		t.Errorf("the missing command line was kept: %v", s.pw.cmds)
	}
}
