package docker

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	for _, c := range []struct {
		in    string
		comm  string
		ppid  int
		ticks int64
		ok    bool
	}{
		{"42 (python3) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 20 18446744073709551615", "python3", 7, 123456, true},
		{"43 (a b) c)) R 1 43 43 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", "a b) c)", 1, 99, true},
		{"44 (short) S 1 2 3", "", 0, 0, false},
		{"no parens", "", 0, 0, false},
		{"45 (x) S notanumber 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0", "", 0, 0, false},
	} {
		comm, ppid, ticks, ok := parseProcStat([]byte(c.in))
		if ok != c.ok || (ok && (comm != c.comm || ppid != c.ppid || ticks != c.ticks)) {
			t.Errorf("%q: %q %d %d %v", c.in, comm, ppid, ticks, ok)
		}
	}
	// This process's own stat parses, with its real parent.
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc")
	}
	if _, ppid, _, ok := parseProcStat(data); !ok || strconv.Itoa(ppid) != strconv.Itoa(os.Getppid()) {
		t.Errorf("own stat: ppid %d ok %v, want %d", ppid, ok, os.Getppid())
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("42 (python3) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000"))
	f.Add([]byte("1 ()) S"))
	f.Fuzz(func(t *testing.T, b []byte) { parseProcStat(b) })
}

// A process's files are read through kept handles: the same process reads
// again (with its memory as it is now), a process that has gone reads as
// gone, and its handles are closed.
func TestReadProcKeepsFilesWhileTheProcessLives(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	pid := cmd.Process.Pid
	s := &sandbox{}
	s.pw.cmds = map[procID]procCmd{}
	for i := 0; i < 2; i++ {
		p, _, ok := s.readProc(pid)
		if !ok || p.PID != pid || p.PPID != os.Getpid() || p.RSSBytes <= 0 || !strings.HasPrefix(p.Command, "sleep") {
			t.Fatalf("read %d: %+v ok %v", i, p, ok)
		}
	}
	if len(s.pw.files.Paths()) != 2 {
		t.Errorf("%d files kept, want stat and statm", len(s.pw.files.Paths()))
	}
	cmd.Process.Kill()
	cmd.Wait() // reaped: its /proc directory is gone
	if p, _, ok := s.readProc(pid); ok {
		t.Errorf("a reaped process still reads: %+v", p)
	}
	if len(s.pw.files.Paths()) != 0 {
		t.Errorf("%d files still kept for a process that has gone", len(s.pw.files.Paths()))
	}
}
