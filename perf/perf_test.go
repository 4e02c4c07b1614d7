// Package perf measures headroom against the engine's own limits and
// against a plain `docker run` loop, side by side in one run, and prints
// the table docs/PERFORMANCE.md holds. make bench runs it.
package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/store"
)

type row struct{ figure, measure, value, target string }

var table []row

// add records a row and prints it at once (with the load), so a run cut
// short still shows what it measured.
func add(figure, measure, value, target string) {
	table = append(table, row{figure, measure, value, target})
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("row | %s | %s | %s | %s | load %s\n", figure, measure, value, target, strings.Join(strings.Fields(string(load))[:3], " "))
}

// usage is what /usr/bin/time -v says about a process.
type usage struct {
	wall      time.Duration
	cpu       time.Duration // user + system
	maxRSSKiB int
}

func parseTime(s string) usage {
	var u usage
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		switch k {
		case "User time (seconds)", "System time (seconds)":
			f, _ := strconv.ParseFloat(v, 64)
			u.cpu += time.Duration(f * float64(time.Second))
		case "Maximum resident set size (kbytes)":
			u.maxRSSKiB, _ = strconv.Atoi(v)
		}
	}
	return u
}

type env struct {
	t     *testing.T
	bin   string
	dir   string
	image string
}

// headroom runs the binary under /usr/bin/time -v.
func (e env) headroom(args ...string) (string, usage) {
	e.t.Helper()
	tf := filepath.Join(e.dir, "time.txt")
	cmd := exec.Command("/usr/bin/time", append([]string{"-v", "-o", tf, e.bin}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("headroom %v: %v\n%s", args, err, errb.String())
	}
	b, _ := os.ReadFile(tf)
	u := parseTime(string(b))
	u.wall = time.Since(start)
	return out.String(), u
}

// results reads the experiment a --format json run printed.
func (e env) results(stdout string) []model.TrialResult {
	e.t.Helper()
	var doc struct {
		Manifest struct {
			ID string `json:"id"`
		} `json:"manifest"`
		Trials []model.TrialResult `json:"trials"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		e.t.Fatalf("json: %v", err)
	}
	return doc.Trials
}

// dockerLoop runs n `docker run --rm --network none` of the same trivial
// step with c at a time.
func (e env) dockerLoop(n, c int) time.Duration {
	return e.dockerRuns(n, c, "--entrypoint", "/hr-workload", e.image, "run", "--step", "step", "--profile", `{"duration_ms":0}`)
}

// dockerRuns runs n `docker run --rm --network none --memory 32m ARGS`,
// c at a time.
func (e env) dockerRuns(n, c int, args ...string) time.Duration {
	e.t.Helper()
	return e.dockerRunsOn("none", n, c, args...)
}

// dockerRunsOn is dockerRuns on the engine's network net.
func (e env) dockerRunsOn(net string, n, c int, args ...string) time.Duration {
	e.t.Helper()
	var wg sync.WaitGroup
	jobs := make(chan int, n)
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				out, err := exec.Command("docker", append([]string{"run", "--rm", "--network", net, "--memory", "32m", "--memory-swap", "32m",
					"--label", runner.LabelHeadroom + "=1", "--label", runner.LabelOwner + "=" + runner.Owner()}, args...)...).CombinedOutput()
				if err != nil {
					e.t.Errorf("docker run: %v %s", err, out)
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// want says whether the run measures the rows of figure id:
// HEADROOM_BENCH_ROWS, a comma-separated list of ids (1, 6scale, 6b, 1b,
// 1c, 2, 4, console32, firstframe), picks some; unset, all. make bench and make
// bench-scale split them.
func want(id string) bool {
	rows := os.Getenv("HEADROOM_BENCH_ROWS")
	if rows == "" {
		return true
	}
	for _, r := range strings.Split(rows, ",") {
		if strings.TrimSpace(r) == id {
			return true
		}
	}
	return false
}

func TestPerformanceTable(t *testing.T) {
	if os.Getenv("HEADROOM_BENCH") == "" {
		t.Skip("set HEADROOM_BENCH=1 (make bench) to measure")
	}
	if _, err := exec.LookPath("/usr/bin/time"); err != nil {
		t.Skip("needs /usr/bin/time (Debian: apt-get install time)")
	}
	dir := t.TempDir()
	bin, err := enginetest.BuildHeadroom(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := env{t: t, bin: bin, dir: dir}
	img, _ := e.headroom("images", "build")
	e.image = strings.TrimSpace(img)
	out := filepath.Join(dir, "exp")
	run := func(extra ...string) (string, usage) {
		return e.headroom(append([]string{"run", "--tasks-dir", "testdata", "--format", "json", "--out", out, "--seed", "1"}, extra...)...)
	}

	// 1 and 6: orchestration overhead and scaling, against a docker run
	// loop, interleaved in rounds so drift on a shared machine hits both.
	// At concurrency 1 the same trials with --exec-steps too: each step an
	// engine exec, as task images run them.
	const n, rounds = 40, 2
	// Concurrency 16 and 32 are make bench-scale's (id 6scale).
	var cs []int
	if want("1") {
		cs = append(cs, 1, 2, 4, 8)
	}
	if want("6scale") {
		cs = append(cs, 16, 32)
	}
	{
		for _, c := range cs {
			// At least four trials per slot, so the sweep is more than its
			// first wave of starts.
			n := max(n, 4*c)
			var hWall, xWall, dWall time.Duration
			var cpu time.Duration
			var all []model.TrialResult
			trivial := []string{"--tasks", "trivial", "--ratios", "1", "--repeats", strconv.Itoa(n / rounds), "--concurrency", strconv.Itoa(c)}
			for r := 0; r < rounds; r++ {
				stdout, u := run(trivial...)
				hWall += u.wall
				cpu += u.cpu
				all = append(all, e.results(stdout)...)
				if c == 1 {
					_, u := run(append(trivial, "--exec-steps")...)
					xWall += u.wall
				}
				dWall += e.dockerLoop(n/rounds, c)
			}
			h := hWall.Seconds() / float64(n)
			d := dWall.Seconds() / float64(n)
			value := fmt.Sprintf("%.0f ms vs %.0f ms per trial (%.2f×); %.1f vs %.1f trials/s; headroom CPU %.2f s", 1000*h, 1000*d, h/d, 1/h, 1/d, cpu.Seconds())
			if c >= 16 {
				s := scaleOf(all)
				value += fmt.Sprintf(" = %.1f%% of a core per running trial (%.0f trial-seconds; at most %d running at once)", 100*cpu.Seconds()/s.trialSecs, s.trialSecs, s.peakRunning)
			}
			add("1/6 overhead & scaling", fmt.Sprintf("%d trivial trials, concurrency %d: headroom (whole command) vs a docker run --rm loop", n, c),
				value, map[bool]string{true: "≤ 1.10× at concurrency 1", false: "approach the engine's rate"}[c == 1])
			if c == 1 {
				x := xWall.Seconds() / float64(n)
				add("1/6 overhead & scaling", "the same, headroom --exec-steps (an engine exec per step, as task images run)",
					fmt.Sprintf("%.0f ms vs %.0f ms per trial (%.2f×)", 1000*x, 1000*d, x/d), "(comparison)")
			}
		}
	}

	// 6b: sampling at scale. c trials that hold 10 MiB for 8 s, all
	// started at once (one wave), so c are sampled together for most of
	// their lives: each trial's achieved sampling rate (recorded per trial,
	// sample_rate_hz), headroom's CPU per running trial, and the time
	// against a docker run loop of the same workload.
	if want("6b") {
		for _, c := range []int{16, 32} {
			var hWall, dWall, cpu time.Duration
			var all []model.TrialResult
			for r := 0; r < rounds; r++ {
				stdout, u := run("--tasks", "hold", "--ratios", "1", "--repeats", strconv.Itoa(c), "--concurrency", strconv.Itoa(c))
				hWall += u.wall
				cpu += u.cpu
				all = append(all, e.results(stdout)...)
				dWall += e.dockerRuns(c, c, "--entrypoint", "/hr-workload", e.image, "run", "--step", "hold", "--profile", `{"duration_ms":8000,"base_mb":10,"ramp_pct":1}`)
			}
			s := scaleOf(all)
			add("6b sampling at scale", fmt.Sprintf("%d trials holding 10 MiB for 8 s, all %d at once (%d rounds): per-trial sampling rate; headroom CPU per running trial; wall time vs a docker run --rm loop of the same workload", c*rounds, c, rounds),
				fmt.Sprintf("%.1f samples/s per trial on average, %.1f worst trial (%d samples dropped); %.2f s CPU over %.0f trial-seconds = %.2f%% of a core per running trial (at most %d running at once); %.1f s vs %.1f s per round (%.2f×)",
					s.meanHz, s.worstHz, s.dropped, cpu.Seconds(), s.trialSecs, 100*cpu.Seconds()/s.trialSecs, s.peakRunning, hWall.Seconds()/rounds, dWall.Seconds()/rounds, hWall.Seconds()/dWall.Seconds()),
				"≥ 20 Hz per trial; approach the engine's rate")
		}
	}

	// 1b: a task image (the Debian image, a trivial command as the step
	// and the verifier): headroom through the step driver mounted in it,
	// and with --exec-steps (an engine exec per step, how every task image
	// ran before), against a docker run loop of the same image.
	if want("1b") {
		if err := exec.Command("docker", "image", "inspect", docker.DebianImage).Run(); err != nil {
			add("1b task image", "trivial trials in "+docker.DebianImage, "not measured: the image is missing (make real-images)", "≤ 1.05×")
		} else {
			var dWall, xWall, dockWall time.Duration
			trivial := []string{"--tasks", "trivial-debian", "--ratios", "1", "--repeats", strconv.Itoa(n / rounds), "--concurrency", "1"}
			var runner string
			for r := 0; r < rounds; r++ {
				stdout, u := run(trivial...)
				dWall += u.wall
				if res := e.results(stdout); len(res) > 0 {
					runner = res[0].StepRunner
				}
				_, u = run(append(trivial, "--exec-steps")...)
				xWall += u.wall
				dockWall += e.dockerRuns(n/rounds, 1, docker.DebianImage, "true")
			}
			d, x, dock := dWall.Seconds()/n, xWall.Seconds()/n, dockWall.Seconds()/n
			add("1b task image", fmt.Sprintf("%d trivial trials in %s, concurrency 1: headroom (steps by %s) vs a docker run --rm loop", n, docker.DebianImage, runner),
				fmt.Sprintf("%.0f ms vs %.0f ms per trial (%.2f×)", 1000*d, 1000*dock, d/dock), "≤ 1.05×")
			add("1b task image", "the same, headroom --exec-steps (an engine exec per step: task images before the driver)",
				fmt.Sprintf("%.0f ms vs %.0f ms per trial (%.2f×)", 1000*x, 1000*dock, x/dock), "(before)")
		}
	}

	// 1c: a task directory (perf/harbor/trivial: a Harbor task on the
	// Debian image, oracle: its solution and tests copied in, the reward
	// read back), 6 trials a command, against a docker run loop of the same
	// work; then the per-phase medians of headroom's commands
	// (HEADROOM_TIMINGS).
	if want("1c") {
		if err := exec.Command("docker", "image", "inspect", docker.DebianImage).Run(); err != nil {
			add("1c task directory", "a trivial Harbor task in "+docker.DebianImage, "not measured: the image is missing (make real-images)", "≤ 1.10×")
		} else {
			const per, rounds = 6, 5
			timings := filepath.Join(e.dir, "timings.tsv")
			t.Setenv(runner.TimingsEnv, timings)
			work := `mkdir -p /app && echo hello > /app/out.txt; mkdir -p /logs/verifier; if grep -qx hello /app/out.txt; then echo 1 > /logs/verifier/reward.txt; fi`
			var hWall, dWall time.Duration
			var ratios []float64
			for r := 0; r < rounds; r++ {
				_, u := e.headroom("run", "--tasks-dir", "harbor", "--agents", "oracle", "--ratios", "1", "--repeats", strconv.Itoa(per), "--concurrency", "1", "--out", out)
				// On the network the task's trials get: a Harbor task
				// without allow_internet = false has the internet
				// (Harbor's default), so its container is on the engine's
				// bridge; a loop on --network none skipped the bridge's
				// setup and teardown that headroom's trial pays.
				d := e.dockerRunsOn("bridge", per, 1, docker.DebianImage, "sh", "-c", work)
				hWall += u.wall
				dWall += d
				ratios = append(ratios, u.wall.Seconds()/d.Seconds())
			}
			os.Unsetenv(runner.TimingsEnv)
			sort.Float64s(ratios)
			add("1c task directory", fmt.Sprintf("%d rounds of %d trials of perf/harbor/trivial (oracle, %s), concurrency 1: headroom (whole command) vs a docker run --rm loop of the same work", rounds, per, docker.DebianImage),
				fmt.Sprintf("%.2f s vs %.2f s a command (median ratio %.2f×, %.2f–%.2f)", hWall.Seconds()/rounds, dWall.Seconds()/rounds, ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1]), "≤ 1.10×")
			add("1c task directory", "headroom's phases, median ms (HEADROOM_TIMINGS)", phaseMedians(t, timings), "≤ 150 ms fixed a command")
		}
	}

	// 2: sampling fidelity on a workload with known 200 ms spikes: the
	// cgroup sampler against the kernel's own peak, then the engine's 1 Hz
	// stats stream against the cgroup sampler on the same trajectories
	// (same seeds).
	if want("2") {
		cgroupPeak := map[string]int64{}
		for _, sampler := range []string{"cgroup", "stats"} {
			stdout, _ := run("--tasks", "spikes", "--ratios", "uncapped", "--repeats", "4", "--concurrency", "4", "--sampler", sampler)
			rs := e.results(stdout)
			expDir := filepath.Join(out, lastExperiment(t, out))
			worst, mean, rate := 1.0, 0.0, 0.0
			for _, r := range rs {
				rate += r.SampleRateHz / float64(len(rs))
				var f float64
				if sampler == "cgroup" {
					cgroupPeak[r.ID] = r.PeakWorkingSetBytes
					samples, _, _ := store.ReadTrace(expDir, r.ID)
					var usagePeak int64
					for _, s := range samples {
						usagePeak = max(usagePeak, s.UsageBytes)
					}
					f = float64(usagePeak) / float64(max(r.KernelPeakBytes, 1))
				} else {
					f = float64(r.PeakWorkingSetBytes) / float64(max(cgroupPeak[r.ID], 1))
				}
				worst = min(worst, f)
				mean += f / float64(len(rs))
			}
			if sampler == "cgroup" {
				add("2 sampling fidelity", "4 concurrent trials with one 80 MiB spike of 200 ms: sampled usage peak vs the kernel's peak (max_usage_in_bytes)",
					fmt.Sprintf("%.1f%% mean, %.1f%% worst trial; %.1f samples/s per trial", 100*mean, 100*worst, rate), "within 1%; ≥ 20 Hz")
			} else {
				add("2 sampling fidelity", "the same trials sampled from the engine's stats stream (what 1 Hz docker stats sees) vs the cgroup sampler",
					fmt.Sprintf("%.0f%% of the peak on average, %.0f%% worst; %.1f samples/s per trial", 100*mean, 100*worst, rate), "(comparison)")
			}
		}
	}

	// 4: the headroom process across a sweep of 8 concurrent trials.
	if want("4") {
		_, u := run("--tasks", "steady", "--ratios", "1,uncapped", "--repeats", "8", "--concurrency", "8")
		add("4 process cost (headless)", "16 trials of 4 s, 8 at a time: CPU and peak RSS of headroom (/usr/bin/time -v)",
			fmt.Sprintf("%.2f s CPU over %.1f s = %.1f%% of one core; peak RSS %.0f MiB", u.cpu.Seconds(), u.wall.Seconds(), 100*u.cpu.Seconds()/u.wall.Seconds(), float64(u.maxRSSKiB)/1024),
			"< 5% of a core, < 80 MiB")
		if _, err := exec.LookPath("tmux"); err == nil {
			cu := e.console(out)
			add("4 process cost (console)", "headroom demo --concurrency 8 (600 trials: 8 running throughout) for 40 s in a 200×50 tmux pane",
				fmt.Sprintf("%.2f s CPU over %.1f s = %.1f%% of one core; peak RSS %.0f MiB", cu.cpu.Seconds(), cu.wall.Seconds(), 100*cu.cpu.Seconds()/cu.wall.Seconds(), float64(cu.maxRSSKiB)/1024),
				"< 5% of a core, < 80 MiB")
		}
	}

	if want("console32") {
		if _, err := exec.LookPath("tmux"); err == nil {
			c := e.console32(out)
			add("7 console at 32 live trials", "headroom (console) in a 200×50 tmux pane, sweep of perf/live (36 trials of 45 s pip-style steps, 1x/3x/uncapped) started from the setup screen at concurrency 32; measured over 20 s once 32 are running, from /proc",
				fmt.Sprintf("%.2f s CPU over %.1f s = %.1f%% of one core (%d–%d trials running); RSS %.0f MiB, peak %.0f MiB", c.cpu.Seconds(), c.wall.Seconds(), 100*c.cpu.Seconds()/c.wall.Seconds(), c.minRunning, c.maxRunning, float64(c.rssKiB)/1024, float64(c.hwmKiB)/1024),
				"< 5% of a core, < 80 MiB")
		}
	}

	if want("firstframe") {
		const runs = 15
		ff, err := firstFrames(e.bin, []string{"--out", out, "--theme", "plain"}, runs)
		if err != nil {
			t.Fatal(err)
		}
		add("8 time to first frame", fmt.Sprintf("headroom (the console, images already built) in a 200×50 pty: exec to the first frame written (the setup screen), %d runs", runs),
			fmt.Sprintf("median %.0f ms, fastest %.0f ms, slowest %.0f ms", ms(ff[len(ff)/2]), ms(ff[0]), ms(ff[len(ff)-1])), "< 300 ms")
	}

	var b strings.Builder
	fmt.Fprintf(&b, "| figure | measure | result | target |\n|---|---|---|---|\n")
	for _, r := range table {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.figure, r.measure, r.value, r.target)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nheadroom performance, %s, %d CPUs, %s, load average at the end %s\n\n%s\n", time.Now().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), engineVersion(), strings.Join(strings.Fields(string(load))[:3], " "), b.String())
}

// console runs the demo in tmux under /usr/bin/time for 40 s, then quits.
func (e env) console(out string) usage {
	e.t.Helper()
	tf := filepath.Join(e.dir, "console-time.txt")
	session := fmt.Sprintf("headroom-perf-%d", os.Getpid())
	// Enough trials that 8 run for the whole 40 s, the same trajectories
	// every time.
	shell := fmt.Sprintf("/usr/bin/time -v -o %s %s demo --concurrency 8 --repeats 200 --seed 1 --theme plain --out %s", tf, e.bin, out)
	if o, err := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", shell).CombinedOutput(); err != nil {
		e.t.Fatalf("tmux: %v %s", err, o)
	}
	defer exec.Command("tmux", "kill-session", "-t", session).Run()
	start := time.Now()
	time.Sleep(40 * time.Second) // the measured period itself, not a synchronisation
	exec.Command("tmux", "send-keys", "-t", session, "q").Run()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if o, _ := exec.Command("tmux", "capture-pane", "-p", "-t", session).Output(); strings.Contains(string(o), "y/n") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	exec.Command("tmux", "send-keys", "-t", session, "y").Run()
	deadline = time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(tf); err == nil && strings.Contains(string(b), "Maximum resident") {
			u := parseTime(string(b))
			u.wall = time.Since(start)
			return u
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatal("the console did not exit")
	return usage{}
}

// scale is what a sweep's trial records say about its concurrency.
type scale struct {
	trialSecs       float64 // the trials' lives (start to end), summed
	peakRunning     int     // the most trials alive at one instant
	meanHz, worstHz float64 // sampling rate per trial
	dropped         int     // samples read but not taken
}

func scaleOf(rs []model.TrialResult) scale {
	s := scale{worstHz: math.Inf(1)}
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, r := range rs {
		s.trialSecs += r.End.Sub(r.Start).Seconds()
		s.meanHz += r.SampleRateHz / float64(len(rs))
		s.worstHz = min(s.worstHz, r.SampleRateHz)
		s.dropped += r.SamplesDropped
		edges = append(edges, edge{r.Start, 1}, edge{r.End, -1})
	}
	// Ends before starts at the same instant: touching is not overlapping.
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].d < edges[j].d
		}
		return edges[i].at.Before(edges[j].at)
	})
	running := 0
	for _, e := range edges {
		running += e.d
		s.peakRunning = max(s.peakRunning, running)
	}
	return s
}

// consoleCost is the console's cost over a measured window, from /proc.
type consoleCost struct {
	wall, cpu              time.Duration
	rssKiB, hwmKiB         int
	minRunning, maxRunning int
}

// console32 opens the console in tmux on perf/testdata, starts a sweep of
// perf/live at concurrency 32 from the setup screen (filter, select,
// start: the keys a user presses), waits for 32 trials to run, and reads
// the console's CPU time and memory from /proc over 20 s. It quits the
// console (which stops and removes the trials) and waits for it to exit.
func (e env) console32(out string) consoleCost {
	e.t.Helper()
	session := fmt.Sprintf("headroom-perf32-%d", os.Getpid())
	shell := fmt.Sprintf("exec %s --tasks-dir testdata --concurrency 32 --repeats 12 --theme plain --out %s", e.bin, out)
	if o, err := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", shell).CombinedOutput(); err != nil {
		e.t.Fatalf("tmux: %v %s", err, o)
	}
	defer exec.Command("tmux", "kill-session", "-t", session).Run()
	pidOut, err := exec.Command("tmux", "display-message", "-p", "-t", session, "#{pane_pid}").Output()
	if err != nil {
		e.t.Fatalf("tmux pane pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidOut)))
	pane := func() string {
		o, _ := exec.Command("tmux", "capture-pane", "-p", "-t", session).Output()
		return string(o)
	}
	waitFor := func(what string, d time.Duration, ok func(string) bool) {
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if ok(pane()) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		e.t.Fatalf("console: no %s within %s:\n%s", what, d, pane())
	}
	send := func(keys ...string) {
		exec.Command("tmux", append([]string{"send-keys", "-t", session}, keys...)...).Run()
	}
	waitFor("setup screen", 30*time.Second, func(s string) bool { return strings.Contains(s, "perf/live") })
	send("/")
	send("-l", "perf/live")
	send("Enter", "Space", "Enter")
	// The live screen's queue line: "running N · queued M".
	running := func(s string) int {
		for _, l := range strings.Split(s, "\n") {
			if i := strings.Index(l, "running "); i >= 0 && strings.Contains(l[i:], " · queued ") {
				n, _ := strconv.Atoi(strings.Fields(l[i+len("running "):])[0])
				return n
			}
		}
		return -1
	}
	waitFor("32 trials running", 2*time.Minute, func(s string) bool { return running(s) == 32 })
	stat := func() (time.Duration, int, int) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			e.t.Fatalf("console: %v", err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		ut, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		var rss, hwm int
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, l := range strings.Split(string(status), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				switch k {
				case "VmRSS":
					rss = n
				case "VmHWM":
					hwm = n
				}
			}
		}
		return time.Duration(ut+st) * 10 * time.Millisecond, rss, hwm // USER_HZ is 100 on Linux
	}
	c := consoleCost{minRunning: 32, maxRunning: 32}
	cpu0, _, _ := stat()
	start := time.Now()
	for time.Since(start) < 20*time.Second { // the measured period itself, not a synchronisation
		time.Sleep(time.Second)
		n := running(pane())
		c.minRunning, c.maxRunning = min(c.minRunning, n), max(c.maxRunning, n)
	}
	cpu1, rss, hwm := stat()
	c.wall, c.cpu, c.rssKiB, c.hwmKiB = time.Since(start), cpu1-cpu0, rss, hwm
	send("q")
	waitFor("quit question", 10*time.Second, func(s string) bool { return strings.Contains(s, "y/n") })
	send("y")
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return c
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatal("the console did not exit")
	return c
}

func lastExperiment(t *testing.T, root string) string {
	list, err := store.List(root)
	if err != nil || len(list) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	return filepath.Base(list[0].Dir)
}

func engineVersion() string {
	cli, err := docker.Connect()
	if err != nil {
		return "no engine"
	}
	defer cli.Close()
	v, err := cli.ServerVersion(context.Background())
	if err != nil {
		return "engine ?"
	}
	return "Docker " + v.Version + ", API " + v.APIVersion
}

// phaseMedians reads a HEADROOM_TIMINGS file: each phase's median in ms.
func phaseMedians(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "no timings: " + err.Error()
	}
	durs := map[string][]float64{}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			continue
		}
		us, _ := strconv.ParseFloat(f[3], 64)
		if _, ok := durs[f[1]]; !ok {
			order = append(order, f[1])
		}
		durs[f[1]] = append(durs[f[1]], us/1000)
	}
	var parts []string
	for _, p := range order {
		v := durs[p]
		sort.Float64s(v)
		parts = append(parts, fmt.Sprintf("%s %.0f", p, v[len(v)/2]))
	}
	return strings.Join(parts, "; ")
}
