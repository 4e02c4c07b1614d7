package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A step with an output file (Harbor's oracle's tee) lasts while a job it
// left in the background holds its output: the job's later output is the
// step's and the file's, and what it did is done when the step ends.
func TestHeldStepWaitsForTheJobHoldingItsOutput(t *testing.T) {
	dir := t.TempDir()
	file, done := filepath.Join(dir, "oracle.txt"), filepath.Join(dir, "done")
	script := `(sleep 1; echo late; : > "$1") & echo early`
	var stdout, stderr bytes.Buffer
	code := runCommand(Command{Argv: []string{"/bin/sh", "-c", script, "sh", done}, End: "<e>", OutputFile: file, Held: "<held>"}, nil, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(done); err != nil {
		t.Errorf("the step ended before the job holding its output had: %v", err)
	}
	if stdout.String() != "early\nlate\n" {
		t.Errorf("stdout %q, want the job's output too", stdout.String())
	}
	if got, _ := os.ReadFile(file); string(got) != "early\nlate\n" {
		t.Errorf("the output file holds %q, want the job's output too", got)
	}
	if !strings.Contains(stderr.String(), "<held>\n") {
		t.Errorf("stderr %q lacks the held marker", stderr.String())
	}
}

// A job that holds only the trace's descriptor (its output sent
// elsewhere, as `nohup cmd > log 2>&1 &`) holds nothing of Harbor's: the
// step ends with its process; and one without an output file is never held.
func TestStepNotHeldByTheTraceOrWithoutAFile(t *testing.T) {
	for _, c := range []struct {
		name   string
		script string
		file   bool
	}{
		{"trace descriptor only", `exec 237>&1; sleep 30 > /dev/null 2>&1 & echo $!`, true},
		{"no output file", `sleep 30 & echo $!`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := Command{Argv: []string{"bash", "-c", c.script}, End: "<e>", TraceFD: 237, Held: "<held>"}
			if c.file {
				cmd.OutputFile = filepath.Join(t.TempDir(), "oracle.txt")
			}
			var stdout, stderr bytes.Buffer
			runCommand(cmd, nil, nil, &stdout, &stderr)
			job, err := strconv.Atoi(strings.TrimSpace(stdout.String()))
			if err != nil {
				t.Fatalf("stdout %q", stdout.String())
			}
			// Still running: the step did not wait for it. (It may be
			// said held for an instant: the job holds the output from its
			// fork to its redirection.)
			alive := syscall.Kill(job, 0) == nil
			syscall.Kill(job, syscall.SIGKILL)
			if !alive {
				t.Errorf("the step was held until its job ended (stderr %q)", stderr.String())
			}
		})
	}
}

// headroom ends a hold at the step's timeout with OpRelease: the step's
// end comes at once, and the job holding its output runs on, as Harbor
// leaves it when it cancels its exec. A release naming another step's end,
// or coming when nothing is held, ends nothing and writes nothing.
func TestHoldEndsOnItsRelease(t *testing.T) {
	inR, inW := io.Pipe()
	errR, errW := io.Pipe()
	var stdout syncBuffer
	ended := make(chan int, 1)
	go func() { ended <- drive(inR, &stdout, errW); errW.Close() }()
	errLines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			errLines <- sc.Text()
		}
		close(errLines)
	}()
	send := func(c Command) {
		b, _ := json.Marshal(c)
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case line, ok := <-errLines:
				if !ok {
					t.Fatalf("the driver ended before %q", want)
				}
				if strings.Contains(line, want) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q on stderr", want)
			}
		}
	}
	send(Command{Op: OpRelease, End: "<nothing held>"})
	file := filepath.Join(t.TempDir(), "oracle.txt")
	send(Command{Argv: []string{"/bin/sh", "-c", `sleep 60 & echo "$!"`}, End: "<e1>", OutputFile: file, Held: "<held>"})
	waitFor("<held>")
	send(Command{Op: OpRelease, End: "<e0>"})
	send(Command{Op: OpRelease, End: "<e1>"})
	waitFor("<e1> 0")
	send(Command{Argv: []string{"/bin/sh", "-c", `echo second`}, End: "<e2>"})
	waitFor("<e2> 0")
	inW.Close()
	if code := <-ended; code != 0 {
		t.Errorf("drive = %d", code)
	}
	out := stdout.String()
	job, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("stdout %q", out)
	}
	alive := syscall.Kill(job, 0) == nil
	syscall.Kill(job, syscall.SIGKILL)
	if !alive {
		t.Error("the job holding the output did not run on past the release")
	}
	if !strings.HasSuffix(out, "<e1> 0\nsecond\n<e2> 0\n") || strings.Contains(out, "<e0>") || strings.Contains(out, "nothing held") {
		t.Errorf("stdout %q: want each command's end once, and no release's", out)
	}
}

// A job run as another user than the driver (root, with no
// CAP_SYS_PTRACE in a container) is still read as holding the output.
func TestHeldByAnotherUsersJob(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a step as another user needs root")
	}
	// Not under t.TempDir, whose parent only root may enter.
	dir, err := os.MkdirTemp("", "hold")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	done := filepath.Join(dir, "done")
	var stdout, stderr bytes.Buffer
	c := Command{Argv: []string{"/bin/sh", "-c", `(sleep 1; : > "$1") & echo early`, "sh", done}, User: "65534:65534", End: "<e>", OutputFile: filepath.Join(dir, "oracle.txt"), Held: "<held>"}
	if code := runCommand(c, nil, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(done); err != nil || !strings.Contains(stderr.String(), "<held>") {
		t.Errorf("the step ended before its job (run as 65534) had: %v; stderr %q", err, stderr.String())
	}
}
