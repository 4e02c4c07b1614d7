package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/workload/wire"
)

// The work is CPU time the kernel counted, not wall time: the process has
// used at least that much when it returns.
func TestCPUWorkIsKernelCountedTime(t *testing.T) {
	before := processCPU()
	doCPUWork(150*time.Millisecond, 2)
	if used := processCPU() - before; used < 150*time.Millisecond {
		t.Errorf("used %v of CPU, want at least 150ms", used)
	}
}

// A deadline shorter than the work could ever take fails the step with a
// test-style line; a generous one passes it.
func TestCPUWorkDeadline(t *testing.T) {
	code, out, _ := runProfile(t, "1", wire.Profile{Style: "pytest", CPUWorkMS: 100, DeadlineMS: 1})
	if code != 1 || !strings.Contains(out, "FAILED test_within_deadline") {
		t.Errorf("1ms deadline for 100ms of work: exit %d, output %q", code, out)
	}
	code, out, _ = runProfile(t, "1", wire.Profile{Style: "pytest", CPUWorkMS: 50, DeadlineMS: 600_000})
	if code != 0 || !strings.Contains(out, "50 ms of CPU work done") {
		t.Errorf("10-minute deadline: exit %d, output %q", code, out)
	}
}
