package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/headroom-eval/headroom/model"
)

// StepMode makes the binary a step's first program when the driver
// raises its steps' OOM score (oomSpare.raise): `step ADJ PATH ARGV...`
// writes ADJ to its own oom_score_adj, which anyone may raise, then
// becomes PATH with ARGV, keeping its environment, its files and its
// pid. The step and everything it starts hold ADJ from their first
// instruction: the driver cannot raise a child's score between its fork
// and its exec, and a write after the start would race the step's own
// first children.
const StepMode = "step"

// raisesSteps says whether this process (a driver or probe the engine
// did not spare) can raise its steps above itself: its own score reads
// below model.StepRaisedOOMScoreAdj.
func raisesSteps() bool {
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return false
	}
	adj, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && adj < model.StepRaisedOOMScoreAdj
}

// raiseStep makes cmd (resolved, not yet started) start through
// StepMode: the driver's own binary (/proc/self/exe, read in the child
// before its exec) raises the step's score, then runs it.
func raiseStep(cmd *exec.Cmd) {
	cmd.Args = append([]string{"hr-workload", StepMode, strconv.Itoa(model.StepRaisedOOMScoreAdj), cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
}

// stepExec is StepMode. A failed write leaves the step at the driver's
// score, as it ran before; a failed exec exits as the engine's exec
// would, 127 for a program that is not there, else 126.
func stepExec(args []string, stderr io.Writer) int {
	if len(args) < 3 {
		fmt.Fprintln(stderr, "usage: hr-workload step ADJ PATH ARGV...")
		return 2
	}
	if _, err := strconv.Atoi(args[0]); err == nil {
		if f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_WRONLY, 0); err == nil {
			_, _ = f.WriteString(args[0] + "\n")
			_ = f.Close()
		}
	}
	err := syscall.Exec(args[1], args[2:], os.Environ())
	fmt.Fprintf(stderr, "hr-workload: exec: %q: %v\n", args[2], err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}
