package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestWaitTrackerSumsThreadsAsTheyLive(t *testing.T) {
	dir := t.TempDir()
	proc := t.TempDir()
	old := ProcRoot
	ProcRoot = proc
	t.Cleanup(func() { ProcRoot = old })
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &Reader{version: 1, memDir: dir}
	var w WaitTracker
	write(filepath.Join(dir, "tasks"), "10\n11\n")
	write(filepath.Join(proc, "10", "schedstat"), "5000 300000000 7\n")
	write(filepath.Join(proc, "11", "schedstat"), "5000 100000000 7\n")
	if n, ok := w.Read(r); !ok || n != 400e6 {
		t.Fatalf("first read %d %v", n, ok)
	}
	// Thread 11 exits; 10 waits 0.2 s more; 12 starts.
	write(filepath.Join(dir, "tasks"), "10\n12\n")
	write(filepath.Join(proc, "10", "schedstat"), "5000 500000000 9\n")
	write(filepath.Join(proc, "12", "schedstat"), "5000 50000000 1\n")
	if n, _ := w.Read(r); n != 650e6 {
		t.Errorf("second read %d, want 0.5 + 0.1 (gone, kept) + 0.05 s", n)
	}
	v2 := &Reader{version: 2, memDir: dir}
	write(filepath.Join(dir, "cpu.pressure"), "some avg10=1.00 avg60=0.50 avg300=0.10 total=1234567\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	var w2 WaitTracker
	if n, ok := w2.Read(v2); !ok || n != 1234567000 {
		t.Errorf("v2 %d %v", n, ok)
	}
}

// The step driver's own threads (the container's PID 1, Skip) are not
// the task's: their waits are left out of its CPU wait.
func TestWaitTrackerSkipsTheDriver(t *testing.T) {
	dir, proc := t.TempDir(), t.TempDir()
	old := ProcRoot
	ProcRoot = proc
	t.Cleanup(func() { ProcRoot = old })
	for p, s := range map[string]string{
		filepath.Join(dir, "tasks"):             "20\n21\n30\n",
		filepath.Join(proc, "20", "schedstat"):  "1 900000000 1\n",
		filepath.Join(proc, "21", "schedstat"):  "1 800000000 1\n",
		filepath.Join(proc, "20", "task", "20"): "",
		filepath.Join(proc, "20", "task", "21"): "",
		filepath.Join(proc, "30", "schedstat"):  "1 100000000 1\n",
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := WaitTracker{Skip: 20}
	if n, ok := w.Read(&Reader{version: 1, memDir: dir}); !ok || n != 100e6 {
		t.Errorf("read %d %v, want the task's thread 30 alone (0.1 s)", n, ok)
	}
}

// fakeThreads is a v1 cgroup of n threads (tids from 100) each of
// which has waited 1 µs, under a /proc of their own.
func fakeThreads(tb testing.TB, n int) *Reader {
	dir, proc := tb.TempDir(), tb.TempDir()
	old := ProcRoot
	ProcRoot = proc
	tb.Cleanup(func() { ProcRoot = old })
	var list []byte
	for tid := 100; tid < 100+n; tid++ {
		list = append(list, []byte(strconv.Itoa(tid)+"\n")...)
		p := filepath.Join(proc, strconv.Itoa(tid), "schedstat")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("1 1000 1\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks"), list, 0o644); err != nil {
		tb.Fatal(err)
	}
	return &Reader{version: 1, memDir: dir}
}

// Thousands of threads are read ThreadsPerRead a sample, in turn, so a
// sample's cost is bounded and every thread's wait is still counted
// within a few samples.
func TestWaitTrackerReadsABoundedNumberOfThreadsInTurn(t *testing.T) {
	const threads = 1000
	r := fakeThreads(t, threads)
	var w WaitTracker
	if n, _ := w.Read(r); n != ThreadsPerRead*1000 {
		t.Fatalf("first sample read %d threads' waits, want %d", n/1000, ThreadsPerRead)
	}
	samples := 1
	for ; samples < 10; samples++ {
		if n, _ := w.Read(r); n == threads*1000 {
			break
		}
	}
	if want := (threads + ThreadsPerRead - 1) / ThreadsPerRead; samples+1 != want {
		t.Errorf("every thread counted after %d samples, want %d", samples+1, want)
	}
}

// One v1 CPU-wait sample of a container holding 5,000 threads (the
// thirtieth attacker's task): a sample reads ThreadsPerRead of them.
func BenchmarkWaitTrackerV1FiveThousandThreads(b *testing.B) {
	r := fakeThreads(b, 5000)
	var w WaitTracker
	b.ResetTimer()
	for b.Loop() {
		w.Read(r)
	}
}

// A thread never read is read before the known ones' turn: among 1,000
// known threads, a new one that lives one sample is counted.
func TestWaitTrackerReadsNewThreadsFirst(t *testing.T) {
	r := fakeThreads(t, 1000)
	var w WaitTracker
	for range 4 {
		w.Read(r) // every thread known
	}
	before, _ := w.Read(r)
	tid := 100 + 1000
	p := filepath.Join(ProcRoot, strconv.Itoa(tid), "schedstat")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("1 5000000 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, _ := os.ReadFile(filepath.Join(r.memDir, "tasks"))
	if err := os.WriteFile(filepath.Join(r.memDir, "tasks"), append(list, []byte(strconv.Itoa(tid)+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if after, _ := w.Read(r); after-before != 5000000 {
		t.Errorf("the new thread's wait: %d ns counted, want 5000000", after-before)
	}
}
