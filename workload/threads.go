package workload

import (
	"runtime"
	"sync"
)

// The probe shares its pod's pids limit with the task (a pod has no
// limit per container): a task that forks until the kernel refuses
// leaves no pid for a new thread either, and the Go runtime, which makes
// an OS thread whenever a goroutine needs one and none is idle (a step's
// wait, a blocked write, the sampler's tick), dies when clone(2) keeps
// failing ("runtime: failed to create new OS thread", after about 200 ms
// of retries). The pod's PID 1 dying takes every process with it and the
// refused forks are never read: the trial ends with exit 137 and no cause.
//
// So the probe makes its threads before the task runs: GOMAXPROCS pinned
// (no resizing to a changed CPU limit), and probeSpareThreads threads made
// at its start and left idle. The runtime never ends an idle thread, and
// takes an idle one before it makes one, so under a full pids limit the
// probe's few blocking calls at once (its stdin read, a blocked write of
// its stdout, a step's wait, a cgroup read) find a thread ready.

// probeProcs caps the probe's GOMAXPROCS: it reads files and copies lines.
const probeProcs = 2

// probeSpareThreads is how many threads the probe makes at its start:
// well above what it blocks at once (about four calls) plus probeProcs
// running, for 16 of the pod's pids (a kubelet's podPidsLimit is in the
// hundreds or thousands).
const probeSpareThreads = 16

// pinProcs fixes GOMAXPROCS at at most n (set explicitly, the runtime
// no longer changes it with the CPU limit).
func pinProcs(n int) {
	runtime.GOMAXPROCS(max(1, min(n, runtime.GOMAXPROCS(0))))
}

// reserveThreads makes the runtime hold at least n OS threads, idle once
// it returns: n goroutines each locked to a thread of its own at once
// (a locked goroutine that blocks keeps its thread asleep, so the next
// one needs another), then unlocked and ended, which leaves each thread
// on the runtime's idle list for the next goroutine that needs one.
func reserveThreads(n int) {
	var locked, ended sync.WaitGroup
	locked.Add(n)
	ended.Add(n)
	release := make(chan struct{})
	for range n {
		go func() {
			defer ended.Done()
			runtime.LockOSThread()
			locked.Done()
			<-release
			// Unlocked before it ends: a goroutine that ends locked
			// takes its thread with it.
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	close(release)
	ended.Wait()
}
