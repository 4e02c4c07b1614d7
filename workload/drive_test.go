package workload

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The driver runs each command it is told, in order, and ends each with
// its marker and exit code on both streams, as an exec would report it.
func TestDriveRunsCommandsAndReportsExitCodes(t *testing.T) {
	cmds := []Command{
		{Argv: []string{"/bin/sh", "-c", `echo out; echo err >&2; printf open; exit 3`}, End: "<e1>"},
		{Argv: []string{"/bin/sh", "-c", `echo "$GREETING"; kill -9 $$`}, Env: []string{"GREETING=hello"}, End: "<e2>"},
		{Argv: []string{"/no/such/program"}, End: "<e3>"},
		{Argv: nil, End: "<e4>"},
	}
	var in bytes.Buffer
	for _, c := range cmds {
		b, _ := json.Marshal(c)
		in.Write(append(b, '\n'))
	}
	var stdout, stderr bytes.Buffer
	if code := drive(&in, &stdout, &stderr); code != 0 {
		t.Fatalf("drive exited %d at the end of its input, want 0; stderr %q", code, stderr.String())
	}
	wantOut := "out\nopen<e1> 3\nhello\n<e2> 137\n<e3> 127\n<e4> 127\n"
	if stdout.String() != wantOut {
		t.Errorf("stdout = %q, want %q", stdout.String(), wantOut)
	}
	errs := stderr.String()
	for _, want := range []string{"err\n<e1> 3\n", "<e2> 137\n", "/no/such/program", "<e3> 127\n", "empty command", "<e4> 127\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr %q lacks %q", errs, want)
		}
	}
}

// A command that is not one (headroom and the driver out of step) ends
// the driver rather than guessing.
func TestDriveRefusesABadCommand(t *testing.T) {
	for _, line := range []string{"not json\n", `{"argv":["true"]}` + "\n"} {
		var stdout, stderr bytes.Buffer
		if code := drive(strings.NewReader(line), &stdout, &stderr); code != 2 {
			t.Errorf("drive(%q) = %d, want 2", line, code)
		}
		if !strings.Contains(stderr.String(), "bad command") {
			t.Errorf("drive(%q) stderr %q, want it to say bad command", line, stderr.String())
		}
	}
}

// The driver's file operations: a tar unpacked where it says, a file read
// back as one line of base64, a missing file told apart by its exit code.
func TestDriveFileOps(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the file operations run as root only (else headroom uses the engine's copy)")
	}
	dir := t.TempDir()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	body := "echo 1 > /logs/verifier/reward.txt\n"
	for _, h := range []*tar.Header{
		{Name: "tests/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "tests/test.sh", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body))},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	var in bytes.Buffer
	for _, c := range []Command{
		{Op: OpUntar, Argv: []string{dir}, Stdin: tb.Bytes(), End: "<u>"},
		{Op: OpRead, Argv: []string{filepath.Join(dir, "tests", "test.sh")}, End: "<r>"},
		{Op: OpRead, Argv: []string{filepath.Join(dir, "missing")}, End: "<m>"},
		// As rm -rf: a directory whole, a missing path no error.
		{Op: OpRemove, Argv: []string{filepath.Join(dir, "tests"), filepath.Join(dir, "missing")}, End: "<x>"},
	} {
		b, _ := json.Marshal(c)
		in.Write(append(b, '\n'))
	}
	var stdout, stderr bytes.Buffer
	if code := drive(&in, &stdout, &stderr); code != 0 {
		t.Fatalf("drive: %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "tests")); !os.IsNotExist(err) {
		t.Errorf("removed directory: %v", err)
	}
	want := fmt.Sprintf("<u> 0\n%s\n<r> 0\n<m> %d\n<x> 0\n", base64.StdEncoding.EncodeToString([]byte(body)), DriverNoFile)
	if stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
}

// The driver's streams are its channel to headroom: a step gets a pipe of
// its own (not the driver's file), /dev/null as stdin, and the driver is
// non-dumpable, so no other process can open its /proc/PID/fd.
func TestDriveKeepsItsChannelToItself(t *testing.T) {
	out, err := os.CreateTemp(t.TempDir(), "driver-stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c, _ := json.Marshal(Command{Argv: []string{"/bin/sh", "-c", `readlink /proc/self/fd/0; readlink /proc/self/fd/1`}, End: "<e1>"})
	var stderr bytes.Buffer
	if code := drive(bytes.NewReader(append(c, '\n')), out, &stderr); code != 0 {
		t.Fatalf("drive = %d; stderr %q", code, stderr.String())
	}
	got, _ := os.ReadFile(out.Name())
	lines := strings.Split(string(got), "\n")
	if len(lines) < 3 || lines[0] != "/dev/null" || !strings.HasPrefix(lines[1], "pipe:") {
		t.Errorf("the step's stdin and stdout were %q, want /dev/null and a pipe of its own (not %s)", got, out.Name())
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		t.Errorf("the driver is dumpable (%d, %v): another process could open /proc/PID/fd/0", d, err)
	}
}

// A step that leaves a process holding its output ends when its own
// process does (within the wait delay), not when the leftover does.
func TestDriveDoesNotWaitForWhatAStepLeft(t *testing.T) {
	c, _ := json.Marshal(Command{Argv: []string{"/bin/sh", "-c", `sleep 30 & echo left`}, End: "<e1>"})
	var stdout, stderr bytes.Buffer
	start := time.Now()
	drive(bytes.NewReader(append(c, '\n')), &stdout, &stderr)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the step took %s: the driver waited for its background process", d)
	}
	if !strings.Contains(stdout.String(), "left\n<e1> 0\n") {
		t.Errorf("stdout %q", stdout.String())
	}
}

// Reading what is not a regular file (a FIFO in the reward's place) is
// told apart at once, never an open that waits for a writer.
func TestDriveReadRefusesAFIFO(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the driver's file operations need root")
	}
	fifo := filepath.Join(t.TempDir(), "reward.txt")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- fileOp(Command{Op: OpRead, Argv: []string{fifo}, End: "<e>"}, &stdout, &stderr) }()
	select {
	case code := <-done:
		if code != DriverNotRegular {
			t.Errorf("read of a FIFO = %d, want %d (not a regular file)", code, DriverNotRegular)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the driver's read of a FIFO is still waiting for a writer")
	}
}

// Asked, the driver says the pid of each command's process once it runs.
func TestDriveSaysTheStepsPid(t *testing.T) {
	c, _ := json.Marshal(Command{Argv: []string{"/bin/sh", "-c", `echo $$`}, End: "<e1>", Started: "<p1>"})
	var stdout, stderr bytes.Buffer
	drive(bytes.NewReader(append(c, '\n')), &stdout, &stderr)
	pid, _, _ := strings.Cut(stdout.String(), "\n")
	if !strings.Contains(stderr.String(), "<p1> "+pid+"\n") {
		t.Errorf("stderr %q lacks the step's pid %s", stderr.String(), pid)
	}
}

// The driver, started spared (-1000), forks each step at the steps' own
// adjustment and is spared again once it has started: read through the
// file the driver writes, here a plain one.
func TestOOMSpareForksAtTheStepsAdjustment(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("-1000")
	read := func() string {
		b, _ := os.ReadFile(f.Name())
		first, _, _ := strings.Cut(string(b), "\n")
		return first
	}
	s := &oomSpare{f: f}
	var during string
	if err := s.forStep(func() error { during = read(); return nil }); err != nil {
		t.Fatal(err)
	}
	if during != strconv.Itoa(StepOOMScoreAdj) || read() != "-1000" {
		t.Errorf("adjustment while the step forks %q, after %q; want %d, then -1000", during, read(), StepOOMScoreAdj)
	}
	var none *oomSpare // not started spared: the step starts as it is
	if err := none.forStep(func() error { return nil }); err != nil {
		t.Error(err)
	}
}

// A pipe is quiet once its read has waited DrainQuiet since the step's
// end with nothing left in it: counted from the read's start, a last line
// written after DrainQuiet of silence was dropped where the drain had not
// yet been scheduled to read it (TestProbeRaisesItsSteps lost its one
// line 1 run in 6 beside a fuzzer).
func TestDrainIsQuietOnlyOnceItsLastLineIsRead(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	d := &drain{r: r, pw: w, reading: time.Now().Add(-time.Minute)} // a read begun long ago, not run
	ended := time.Now()
	if d.quiet(ended) {
		t.Error("quiet at the step's end: the drain has had no time since it")
	}
	if !d.quiet(ended.Add(-DrainQuiet)) {
		t.Error("an empty pipe whose read has waited DrainQuiet since the end is not quiet")
	}
	if _, err := w.Write([]byte("1000\n")); err != nil {
		t.Fatal(err)
	}
	if d.quiet(ended.Add(-DrainQuiet)) {
		t.Error("quiet with the step's last line still in the pipe")
	}
}
