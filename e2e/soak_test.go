package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/store"
)

// rssKiB reads a process's resident set from /proc.
func rssKiB(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

// TestSoak runs ≥300 short trials at concurrency 4 through the real binary
// (make soak; not part of every CI run): every trial must be accounted
// for, no container left, and the headroom process's memory stable.
func TestSoak(t *testing.T) {
	if os.Getenv("HEADROOM_SOAK") == "" {
		t.Skip("set HEADROOM_SOAK=1 (make soak) to run the soak")
	}
	need(t, "docker engine", exec.Command("docker", "info"))
	repeats := 150
	if n, err := strconv.Atoi(os.Getenv("HEADROOM_SOAK_REPEATS")); err == nil && n > 0 {
		repeats = n
	}
	dir, bin := buildHeadroom(t)
	root := filepath.Join(dir, "experiments")
	cmd := exec.Command("/usr/bin/time", "-v", bin, "run", "--tasks-dir", "testdata/soak", "--ratios", "1,uncapped",
		"--repeats", strconv.Itoa(repeats), "--concurrency", "4", "--seed", "3", "--format", "json", "--out", root)
	if _, err := exec.LookPath("/usr/bin/time"); err != nil {
		cmd = exec.Command(bin, cmd.Args[3:]...)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Sample the headroom process's RSS once a second.
	var mu sync.Mutex
	var rss []int
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				pid := findChild(cmd.Process.Pid, "headroom")
				if v := rssKiB(pid); v > 0 {
					mu.Lock()
					rss = append(rss, v)
					mu.Unlock()
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("soak run: %v\n%s", err, stderr.String())
	}
	var doc report.JSONReport
	report.ReadJSON([]byte(stdout.String()), &doc)
	exp := filepath.Join(root, doc.Experiment)
	results, torn, err := store.ReadTrials(exp)
	if err != nil || torn || len(results) != 2*repeats {
		t.Fatalf("%d of %d trials accounted for (torn %v, %v)", len(results), 2*repeats, torn, err)
	}
	counts := map[model.Outcome]int{}
	for _, r := range results {
		counts[r.Outcome]++
	}
	if _, left := onlyExperiment(t, root); left > 0 {
		t.Errorf("%d container(s) left after the soak", left)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(rss) < 3 {
		t.Fatalf("only %d RSS samples", len(rss))
	}
	first, last, peak := rss[1], rss[len(rss)-1], 0
	for _, v := range rss {
		peak = max(peak, v)
	}
	t.Logf("soak: %d trials in %s (%.1f trials/s) at concurrency 4; outcomes %v", len(results), elapsed.Round(time.Second), float64(len(results))/elapsed.Seconds(), counts)
	t.Logf("headroom RSS: %d KiB after 2 s, %d KiB at the end, %d KiB peak (%d samples)", first, last, peak, len(rss))
	if tv := timeReport(stderr.String()); tv != "" {
		t.Logf("/usr/bin/time -v: %s", tv)
	}
	// Stable: the end within 50% of the early reading (the trial logs and
	// samples go to disk, not memory).
	if float64(last) > 1.5*float64(first)+8*1024 {
		t.Errorf("RSS grew from %d KiB to %d KiB over the soak", first, last)
	}
}

// findChild is the pid of the process named name: the parent itself or
// its child (when run under /usr/bin/time).
func findChild(parent int, name string) int {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", parent)); err == nil && strings.TrimSpace(string(b)) == name {
		return parent
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent, parent))
	if err != nil {
		return parent
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			return pid
		}
	}
	return parent
}

// timeReport picks the CPU and memory lines of /usr/bin/time -v.
func timeReport(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		for _, k := range []string{"User time", "System time", "Percent of CPU", "Maximum resident set size", "Elapsed (wall clock)"} {
			if strings.HasPrefix(l, k) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "; ")
}
