package workload

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// doCPUWork keeps threads busy until the process has used work of CPU
// time (as the kernel counts it, so the amount is the same on any
// machine) and returns the wall time that took.
func doCPUWork(work time.Duration, threads int) time.Duration {
	start := time.Now()
	base := processCPU()
	var done atomic.Bool
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 1.0
			for !done.Load() {
				for range 10000 {
					x = x*1.0000001 + 1
				}
			}
			sink.Store(uint64(x))
		}()
	}
	for processCPU()-base < work {
		time.Sleep(2 * time.Millisecond)
	}
	done.Store(true)
	wg.Wait()
	return time.Since(start)
}

// sink keeps the busy loop's result alive, so the compiler keeps the loop.
var sink atomic.Uint64

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
