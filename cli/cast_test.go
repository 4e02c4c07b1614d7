package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readCast parses an asciicast v2 file: its header and its output events.
func readCast(t *testing.T, path string) (castHeader, []float64, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var head castHeader
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &head) != nil {
		t.Fatalf("no header line: %q", sc.Text())
	}
	var times []float64
	var out strings.Builder
	for sc.Scan() {
		var ev []any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || len(ev) != 3 {
			t.Fatalf("event %q: %v", sc.Text(), err)
		}
		at, ok1 := ev[0].(float64)
		kind, ok2 := ev[1].(string)
		data, ok3 := ev[2].(string)
		if !ok1 || !ok2 || !ok3 || kind != "o" {
			t.Fatalf("event %q is not [time, \"o\", data]", sc.Text())
		}
		times = append(times, at)
		out.WriteString(data)
	}
	return head, times, out.String()
}

// The recording is what the terminal got, in order, at times that only
// move on; a rune cut between two writes is recorded whole.
func TestCastRecordsWhatTheTerminalGot(t *testing.T) {
	dir := t.TempDir()
	tty, err := os.Create(filepath.Join(dir, "tty")) // not a terminal: 80×24
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	clock := time.Unix(1_700_000_000, 0)
	now := func() time.Time { clock = clock.Add(250 * time.Millisecond); return clock }
	path := filepath.Join(dir, "demo.cast")
	rec, err := newCastRecorder(path, tty, "headroom demo", now)
	if err != nil {
		t.Fatal(err)
	}
	writes := []string{"\x1b[?1049h", "OOM KILLED in ", "install \xc3", "\xa9\r\n", "bye"}
	for _, w := range writes {
		if _, err := rec.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Finish(); err != nil {
		t.Fatal(err)
	}
	head, times, out := readCast(t, path)
	if head.Version != 2 || head.Width != 80 || head.Height != 24 || head.Timestamp != 1_700_000_000 {
		t.Errorf("header %+v", head)
	}
	if want := strings.Join(writes, ""); out != want {
		t.Errorf("recorded %q, want %q", out, want)
	}
	for i := 1; i < len(times); i++ {
		if times[i] <= times[i-1] {
			t.Errorf("times %v do not increase", times)
		}
	}
	got, _ := os.ReadFile(tty.Name())
	if string(got) != strings.Join(writes, "") {
		t.Errorf("the terminal got %q", got)
	}
}
