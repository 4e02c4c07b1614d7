package docker

import (
	"os"
	"strconv"
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
