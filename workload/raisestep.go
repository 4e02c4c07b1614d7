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

	"github.com/headroom-eval/headroom/cgroup"
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
	adj, err := strconv.Atoi(strings.TrimSpace(string(b))) // may be negative (a kubelet's -997)
	return err == nil && adj < model.StepRaisedOOMScoreAdj
}

// raiser says, as each step starts, the score a step starts at where the
// driver could not be spared (stepRaise), from the driver's resident set
// then, its cgroup's memory limit and the machine's memory (read once).
type raiser struct {
	cg   *cgroup.Reader
	host int64
}

// newRaiser is nil where the steps are not raised (raisesSteps).
func newRaiser() *raiser {
	if !raisesSteps() {
		return nil
	}
	cg, _ := cgroup.Self("/sys/fs/cgroup")
	return &raiser{cg: cg, host: hostMemory()}
}

// adj is the score the next step starts at; 0 for none (a nil raiser).
func (r *raiser) adj() int {
	if r == nil {
		return 0
	}
	var limit int64
	if r.cg != nil {
		limit, _ = r.cg.MemoryLimit()
	}
	return stepRaise(selfRSS(), limit, r.host)
}

// stepRaise is the OOM score adjustment each step starts at where the
// driver (rss bytes resident) could not be spared, in a cgroup of limit
// bytes (0: none, where the host's memory, host, is what the kernel
// weighs): just enough that any process of the task, however small,
// outranks the driver in the kernel's choice. The kernel adds adj ×
// (its pages ÷ 1000) pages to a process's resident pages; the driver's
// own are counted twice, and 8 MiB more, as it may grow while the step
// runs. Every step gets the same, so the order among the task's processes
// is the harness's, and one that sets its own score keeps its place
// against the rest: the first fix raised every step to the highest
// (1000), and a worker that set itself 500 to be the victim (as a
// browser's renderers set 300) then sat below its coordinator, which the
// kernel took instead (the eleventh attacker; --exec-steps and Harbor
// took the worker).
func stepRaise(rss, limit, host int64) int {
	const page = 4096
	total := limit
	if total <= 0 {
		total = host
	}
	unit := total / page / 1000
	if unit <= 0 {
		return model.StepRaisedOOMScoreAdj
	}
	need := (2*max(rss, 0) + 8<<20) / page
	return int(min(max(need/unit+1, 1), model.StepRaisedOOMScoreAdj))
}

// selfRSS is this process's resident set, from /proc/self/statm.
func selfRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 64 << 20 // unknown: as if large, a larger raise
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 64 << 20
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * int64(os.Getpagesize())
}

// hostMemory is the machine's memory (MemTotal), what the kernel weighs
// a process against in an OOM of no cgroup's limit.
func hostMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// raiseStep makes cmd (resolved, not yet started) start through
// StepMode at adj: the driver's own binary (/proc/self/exe, read in the
// child before its exec) raises the step's score, then runs it.
func raiseStep(cmd *exec.Cmd, adj int) {
	cmd.Args = append([]string{"hr-workload", StepMode, strconv.Itoa(adj), cmd.Path}, cmd.Args...)
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
