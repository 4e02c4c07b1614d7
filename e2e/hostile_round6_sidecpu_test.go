//go:build hostile

package e2e

// The hostile-input suite's sixth round (the fourth hint-free attacker),
// items 3 and 7: a task's CPU ratio escaped through the containers beside
// its own (a compose service) and before it (its Dockerfile's RUN steps).
// Each row reads the CPU bound its code ran under from inside (its
// cgroup's quota), not from timing alone. Each drives the binary under
// test (hostileBin: this tree's, or HEADROOM_HOSTILE_BIN's to show it
// failing on a build without the fix).

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/runner/docker"
)

// cgroupCPUProbe is Python that defines quota() (the cgroup's CFS quota
// and period, "50000 100000", "max 100000" or "-1 100000" for none, from
// cgroup v2's cpu.max or v1's cfs files) and used() (its CPU seconds so
// far), and burn(n, secs): n processes spinning for secs of wall time.
const cgroupCPUProbe = `import os, time
def rd(*ps):
    for p in ps:
        try:
            return open(p).read().strip()
        except OSError:
            pass
    return "?"
def quota():
    q = rd("/sys/fs/cgroup/cpu.max")
    if q != "?":
        return q
    return rd("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us") + " " + rd("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us")
def used():
    s = rd("/sys/fs/cgroup/cpu.stat")
    if s != "?":
        return int(dict(l.split() for l in s.splitlines())["usage_usec"]) / 1e6
    return int(rd("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage")) / 1e9
def burn(n, secs):
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            end = time.time() + secs
            while time.time() < end:
                pass
            os._exit(0)
        kids.append(pid)
    for k in kids:
        os.waitpid(k, 0)
`

// probeLine finds the line a probe printed ("<tag> QUOTA q p USED u WALL
// w") in texts, and reads it.
func probeLine(tag string, texts ...map[string]string) (quota string, used, wall float64, ok bool) {
	for _, m := range texts {
		for _, body := range m {
			for _, l := range strings.Split(body, "\n") {
				i := strings.Index(l, tag+" QUOTA ")
				if i < 0 {
					continue
				}
				f := strings.Fields(l[i+len(tag):])
				// QUOTA q p USED u WALL w
				if len(f) < 7 || f[3] != "USED" || f[5] != "WALL" {
					continue
				}
				u, err1 := strconv.ParseFloat(f[4], 64)
				w, err2 := strconv.ParseFloat(f[6], 64)
				if err1 != nil || err2 != nil {
					continue
				}
				return f[1] + " " + f[2], u, w, true
			}
		}
	}
	return "", 0, 0, false
}

// Item 3: a Harbor task of cpus = 0.5 whose compose service does its
// work: two processes spinning for 3 s. On 2abd0ba the service had no
// CPU bound (a sidecar used 6.4 s of CPU in 6 s) and the record said
// nothing of its CPU. Every sidecar now runs under its compose cpus, else
// the task's own (0.5 here: a quota of 50000 in 100000 read inside it),
// and the record gives its bound (cpus) and the CPU it used (cpu).
func TestHostileR6SidecarCPU(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r6/sidecar-cpu"
	tag := "BURN-" + randomHex(6)
	script := cgroupCPUProbe + `start = time.time()
burn(2, 3)
wall = time.time() - start
open("/shared/burn.tmp", "w").write("` + tag + ` QUOTA %s USED %.2f WALL %.2f\n" % (quota(), used(), wall))
os.rename("/shared/burn.tmp", "/shared/burn")
time.sleep(100000)
`
	compose := "services:\n  main:\n    volumes:\n      - shared:/shared\n  burner:\n    image: " + docker.DebianImage + "\n" +
		"    command: [\"python3\", \"-c\", " + strconv.Quote(script) + "]\n    volumes:\n      - shared:/shared\nvolumes:\n  shared: {}\n"
	harborTask(t, tasks, "sidecar-cpu", name, map[string]string{
		"environment/docker-compose.yaml": compose,
		"task.toml":                       fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 0.5\nmemory_mb = 128\nallow_internet = false\n", name),
		// Waits for the service's line (it writes it after 3 s of burning).
		"solution/solve.sh": "#!/bin/bash\nfor i in $(seq 300); do [ -e /shared/burn ] && break; sleep 0.1; done\ncat /shared/burn\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, left := records(t, out)
	quota, used, wall, said := probeLine(tag, experimentFiles(t, out))
	if !said {
		t.Fatalf("the service's line (%s QUOTA …) is in no file of the experiment: it did not run (exit %d)\n%s", tag, run.code, run.stderr)
	}
	escaped, unrecorded := 0, 0
	// The bound from inside: 0.5 of a 100 ms period. The time it took is
	// the bound seen at work (0.5 × 3 s, a quarter second of slack), not
	// the assertion's ground.
	if quota != "50000 100000" || used > 0.5*wall+0.25 {
		escaped++
		t.Errorf("the service ran under CPU quota %q and used %.2f s of CPU in %.2f s beside a cpus = 0.5 task: want a quota of \"50000 100000\" (the task's own cpus) and at most %.2f s", quota, used, wall, 0.5*wall+0.25)
	}
	var recorded string
	if len(recs) == 1 {
		sides, _ := recs[0]["sidecars"].([]any)
		for _, s := range sides {
			m, _ := s.(map[string]any)
			if m["name"] != "burner" {
				continue
			}
			cpus, _ := m["cpus"].(float64)
			cpu, _ := m["cpu"].(map[string]any)
			ns, _ := cpu["usage_ns"].(float64)
			recorded = fmt.Sprintf("cpus %v, cpu.usage_ns %.0f", m["cpus"], ns)
			// Its whole trial's use holds the burn's.
			if cpus != 0.5 || ns < used*1e9*0.95 {
				unrecorded++
				t.Errorf("the record's sidecar burner: %s; want cpus 0.5 (its bound) and its CPU time, at least the %.2f s it measured inside", recorded, used)
			}
		}
	}
	if recorded == "" {
		unrecorded++
		t.Errorf("no record names the sidecar burner (%d records)", len(recs))
	}
	outcome, cause, _ := oneRecord(recs)
	letoutRow(t, "a Harbor task (cpus = 0.5) whose compose service `burner` spins 2 processes for 3 s, reads its cgroup's CPU quota and its CPU time, and writes them to a shared volume solve.sh prints",
		fmt.Sprintf("exit %d; %s · %s; quota inside %q, %.2f s of CPU in %.2f s; record: %s", run.code, outcome, orNone(cause), quota, used, wall, orNone(recorded)),
		1-len(recs), escaped+left, unrecorded)
}

// Item 7: a Harbor task (cpus = 0.5) whose Dockerfile RUN spins 2
// processes for 3 s and prints its cgroup's CPU quota. On 2abd0ba a
// build's RUN steps had a memory bound and no CPU bound (quota -1: every
// core of the host). Its RUN steps now run under the build's CPU bound,
// the larger of 1 and the task's cpus by default (a quota of 100000 in
// 100000 read inside the step), and the build says the bound it has.
func TestHostileR6BuildCPU(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r6/build-cpu"
	tag := "BUILDBURN-" + randomHex(6)
	harborTask(t, tasks, "build-cpu", name, map[string]string{
		"task.toml":              fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 0.5\nmemory_mb = 128\nallow_internet = false\n", name),
		"environment/probe.py":   cgroupCPUProbe + "import sys\nstart = time.time()\nburn(2, 3)\nwall = time.time() - start\nprint(sys.argv[1], \"QUOTA %s USED %.2f WALL %.2f\" % (quota(), used(), wall), flush=True)\n",
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nCOPY probe.py /probe.py\nRUN python3 /probe.py " + tag + "\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, left := records(t, out)
	texts := map[string]string{"stdout": run.stdout, "stderr": run.stderr}
	quota, used, wall, said := probeLine(tag, experimentFiles(t, out), texts)
	if !said {
		t.Fatalf("the RUN step's line (%s QUOTA …) is in neither the run's output nor the experiment's files: it did not run (exit %d)\n%s", tag, run.code, run.stderr)
	}
	escaped := 0
	// The bound from inside the step: one core (the larger of 1 and the
	// task's 0.5). Its time is the bound at work (1 × 3 s, a quarter
	// second of slack), not the assertion's ground.
	if quota != "100000 100000" || used > wall+0.25 {
		escaped++
		t.Errorf("the build's RUN step ran under CPU quota %q and used %.2f s of CPU in %.2f s: want a quota of \"100000 100000\" (one core: the larger of 1 and the task's cpus) and at most %.2f s", quota, used, wall, wall+0.25)
	}
	unsaid := 0
	if said := "at most 1 CPU (--build-cpus)"; !strings.Contains(run.stderr+run.stdout, said) {
		unsaid++
		t.Errorf("the build does not say its CPU bound (%q) in the run's output", said)
	}
	outcome, cause, _ := oneRecord(recs)
	letoutRow(t, "a Harbor task (cpus = 0.5) whose Dockerfile `RUN python3 /probe.py` spins 2 processes for 3 s and prints its cgroup's CPU quota and CPU time",
		fmt.Sprintf("exit %d; %s · %s; quota inside the RUN step %q, %.2f s of CPU in %.2f s", run.code, outcome, orNone(cause), quota, used, wall),
		1-len(recs), escaped+left, unsaid)
}
