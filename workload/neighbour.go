package workload

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// NeighbourMode makes the binary a noisy neighbour: a container beside a
// trial that loads the host until it is stopped, at an intensity given
// as the fraction of one core it keeps busy.
//
//	cpu    busy loops
//	membw  streams through a buffer larger than the caches (memory bandwidth)
//	disk   writes 1 MiB files and syncs each
const NeighbourMode = "neighbour"

// NeighbourTookLine starts the line a disk neighbour prints each second
// with what it has written and synced so far ("written_bytes=N"): what
// it took of the disk, which its own cgroup's counters do not see where
// the storage driver writes for it (fuse-overlayfs).
const NeighbourTookLine = "neighbour took: "

func neighbour(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(NeighbourMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := fs.String("load", "cpu", "cpu, membw or disk")
	intensity := fs.Float64("intensity", 1, "fraction of a core kept busy (0 < x ≤ 1)")
	dir := fs.String("dir", os.TempDir(), "where disk load writes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !(*intensity > 0 && *intensity <= 1) { // NaN too
		fmt.Fprintln(stderr, "neighbour: --intensity must be in (0, 1]")
		return 2
	}
	runtime.GOMAXPROCS(1)
	var work func()
	switch *load {
	case "cpu":
		x := 1.0
		work = func() {
			for range 20000 {
				x = x*1.0000001 + 1
			}
			sink.Store(uint64(x))
		}
	case "membw":
		buf := make([]byte, 64<<20) // well past any last-level cache
		var sum byte
		work = func() {
			for i := 0; i < len(buf); i += 64 {
				buf[i]++
				sum += buf[(i+len(buf)/2)%len(buf)]
			}
			sink.Store(uint64(sum))
		}
	case "disk":
		block := make([]byte, 1<<20)
		n := 0
		var written int64
		lastSaid := time.Now()
		work = func() {
			if time.Since(lastSaid) >= time.Second {
				fmt.Fprintf(stdout, "%swritten_bytes=%d\n", NeighbourTookLine, written)
				lastSaid = time.Now()
			}
			path := filepath.Join(*dir, fmt.Sprintf(".hr-neighbour-%d", n%8))
			n++
			f, err := os.Create(path)
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				return
			}
			k, _ := f.Write(block)
			if f.Sync() == nil {
				written += int64(k)
			}
			f.Close()
		}
	default:
		fmt.Fprintf(stderr, "neighbour: --load must be cpu, membw or disk (got %q)\n", *load)
		return 2
	}
	fmt.Fprintf(stdout, "neighbour: %s load at %.0f%% of a core\n", *load, 100**intensity)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	const period = 10 * time.Millisecond
	busy := time.Duration(float64(period) * *intensity)
	for {
		select {
		case <-stop:
			return 0
		default:
		}
		t := time.Now()
		for time.Since(t) < busy {
			work()
		}
		if rest := period - time.Since(t); rest > 0 && *intensity < 1 {
			time.Sleep(rest)
		}
	}
}
