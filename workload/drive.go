package workload

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// The step driver: the built-in image's PID 1 when headroom runs a trial's
// steps without the engine's exec (which costs the engine tens of ms per
// step). headroom writes one Command per line on the driver's stdin (the
// container's attached stdin); the driver runs it as its child with the
// container's stdout and stderr, then writes the command's End marker and
// exit code on both streams, so headroom knows each stream is complete
// (the engine copies the two streams separately and may reorder them).
// The driver runs one command at a time and only when told: headroom
// resets the kernel's peak before each, exactly as before an exec. End of
// stdin (headroom gone) ends the driver, and with it the container.

// DriveMode is the argument that makes the binary the step driver.
const DriveMode = "drive"

// IdleMode is the argument that makes the binary an idle PID 1: the
// built-in tasks' idle command is Binary IdleMode, which is how headroom
// knows a task runs in its own image.
const IdleMode = "idle"

// Command is one step for the driver.
type Command struct {
	Argv []string `json:"argv"`
	// Env is added to the container's environment.
	Env []string `json:"env,omitempty"`
	// End is the marker the driver writes after the command, followed by
	// a space and the exit code. headroom makes a fresh one per command,
	// so no output of a step can end another by accident.
	End string `json:"end"`
	// Op, for the probe, asks something other than running Argv
	// (OpPeak, OpFinal); End then names the answer.
	Op string `json:"op,omitempty"`
	// User, for the probe, runs the command as this user ("uid[:gid]" or
	// a name in the image's /etc/passwd) instead of the container's.
	User string `json:"user,omitempty"`
	// Stdin is OpUntar's tar stream.
	Stdin []byte `json:"stdin,omitempty"`
}

// The driver's file operations: what the engine's copy API does (a copy
// costs the engine a few hundred ms on this kind of host, against a few
// for a line to the driver), done by the driver itself as root. A driver
// that is not root refuses both (DriverNotRoot), and headroom uses the
// engine's copy, which writes as root, so files land as they would.
const (
	// OpUntar unpacks Stdin (a tar stream) under Argv[0].
	OpUntar = "untar"
	// OpRead writes the file Argv[0] on stdout as one line of base64;
	// exit DriverNoFile when it does not exist.
	OpRead = "read"
	// OpRemove removes each path of Argv and what is under it, as
	// `rm -rf --` does; a missing path is no error.
	OpRemove = "remove"
)

// Exit codes of the driver's file operations.
const (
	DriverNoFile  = 44 // OpRead: no such file
	DriverNotRoot = 45 // the driver does not run as root: use the engine's copy
)

// initSignals are the signals that end a Go program by default. As the
// container's PID 1 the driver holds them, as an init process without a
// handler does (the kernel does not deliver those to it): a step's `kill
// -TERM 1` killed the driver, and with it the container, which headroom
// then took for the engine lost — the task's own act excused as infra.
// Held by a handler, not ignored, so the steps it starts get the
// defaults. headroom itself stops a container with SIGKILL.
var initSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM}

// drive reads commands from in until it ends.
func drive(in io.Reader, stdout, stderr io.Writer) int {
	if os.Getpid() == 1 {
		held := make(chan os.Signal, 4)
		signal.Notify(held, initSignals...)
		go func() {
			for sig := range held {
				fmt.Fprintf(stderr, "hr-workload drive: %v sent to the container's PID 1 (headroom's step driver) was ignored, as an init process ignores it\n", sig)
			}
		}()
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var c Command
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.End == "" {
			fmt.Fprintf(stderr, "hr-workload drive: bad command %q: %v\n", sc.Text(), err)
			return 2
		}
		var code int
		switch c.Op {
		case OpUntar, OpRead, OpRemove:
			code = fileOp(c, stdout, stderr)
		default:
			code = runCommand(c, stdout, stderr)
		}
		// A last line the command left open ends with the marker;
		// headroom splits it off.
		end := fmt.Sprintf("%s %d\n", c.End, code)
		io.WriteString(stdout, end)
		io.WriteString(stderr, end)
	}
	return 0
}

// runCommand runs c and returns its exit code as the engine's exec would
// report it: 128+signal for a killed process, 126/127 when it cannot start.
func runCommand(c Command, stdout, stderr io.Writer) int {
	if len(c.Argv) == 0 {
		fmt.Fprintln(stderr, "hr-workload drive: empty command")
		return 127
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr // *os.File: the child writes to them itself
	err := cmd.Run()
	return exitCode(cmd, err, stderr)
}

// fileOp does one of the driver's file operations.
func fileOp(c Command, stdout, stderr io.Writer) int {
	if os.Geteuid() != 0 {
		return DriverNotRoot
	}
	if c.Op == OpRemove {
		code := 0
		for _, p := range c.Argv {
			if err := os.RemoveAll(p); err != nil {
				fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
				code = 1
			}
		}
		return code
	}
	if len(c.Argv) != 1 {
		fmt.Fprintf(stderr, "hr-workload drive: %s takes one path\n", c.Op)
		return 2
	}
	if c.Op == OpUntar {
		return untar(c.Argv, bytes.NewReader(c.Stdin), stderr)
	}
	f, err := os.Open(c.Argv[0])
	if errors.Is(err, os.ErrNotExist) {
		return DriverNoFile
	}
	var data []byte
	if err == nil {
		// headroom reads at most 1 MiB: one byte more says it is larger.
		data, err = io.ReadAll(io.LimitReader(f, 1<<20+1))
		f.Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
		return 1
	}
	io.WriteString(stdout, base64.StdEncoding.EncodeToString(data)+"\n")
	return 0
}
