package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// doctor changes nothing: with no workload image for this headroom, it
// says what a run would build instead of building it (and moving the
// image's latest tag).
func TestDoctorBuildsNothing(t *testing.T) {
	needEngine(t)
	// A copy of the in-container program with bytes appended, beside a
	// copy of headroom, is a new binary to the image's content digest: its
	// workload image cannot exist yet.
	dir := t.TempDir()
	fresh := filepath.Join(dir, "headroom")
	marker := fmt.Sprintf("\ndoctor-test %d\n", time.Now().UnixNano())
	for _, c := range []struct{ from, to, extra string }{
		{binary, fresh, ""},
		{filepath.Join(filepath.Dir(binary), "hr-workload"), filepath.Join(dir, "hr-workload"), marker},
	} {
		data, err := os.ReadFile(c.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.to, append(data, c.extra...), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(fresh, "doctor").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "doctor builds nothing") || !strings.Contains(string(out), "headroom images build") {
		// Its failed checks first: a CI log keeps a failure's first lines.
		var failed []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "     fix:") {
				failed = append(failed, l)
			}
		}
		t.Fatalf("doctor: %v; its failed checks: %q\n%s", err, failed, out)
	}
	// The image doctor names (this binary's) must still not exist. Other
	// tests and processes on the engine may build workload images of their
	// own meanwhile, so only this one is checked.
	tag := ""
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "headroom-workload:") {
			tag = f
		}
	}
	if tag == "" {
		t.Fatalf("doctor does not name the workload image it would build:\n%s", out)
	}
	if err := exec.Command("docker", "image", "inspect", tag).Run(); err == nil {
		exec.Command("docker", "image", "rm", tag).Run()
		t.Errorf("doctor built %s", tag)
	}
}

// doctor says the host's load against its CPUs, and warns when it is
// above them (it said OK at a load of 17 on 2 CPUs, which changes every
// result); its mark agrees with the numbers it prints.
func TestDoctorWarnsOfALoadedHost(t *testing.T) {
	needEngine(t)
	out, _ := exec.Command(binary, "doctor").CombinedOutput()
	var l1, l5 float64
	var cpus int
	for _, ln := range strings.Split(string(out), "\n") {
		f := strings.Fields(ln)
		if len(f) < 3 || f[1] != "host" || f[2] != "load" {
			continue
		}
		if _, err := fmt.Sscanf(strings.Join(f[3:], " "), "load average %f (1 min), %f (5 min) on %d CPUs", &l1, &l5, &cpus); err != nil {
			t.Fatalf("host load line %q: %v", ln, err)
		}
		if want := map[bool]string{true: "warn", false: "ok"}[max(l1, l5) > float64(cpus)]; f[0] != want {
			t.Errorf("host load marked %s, want %s: %s", f[0], want, ln)
		}
		return
	}
	t.Fatalf("doctor has no host load line:\n%s", out)
}

// A container that only carries headroom's label (no experiment, trial
// or owner: someone else's) is no leftover of doctor's: `headroom clean`
// leaves it alone, so doctor's "run headroom clean" would never clear it
// (a new user's, beside an attacker's forged container).
func TestDoctorLeavesWhatIsNotProvenHeadrooms(t *testing.T) {
	needEngine(t)
	name := fmt.Sprintf("headroom-doctor-test-unproven-%d", time.Now().UnixNano())
	out, err := exec.Command("docker", "create", "--name", name, "--label", "headroom=1", "headroom-workload:latest", "/hr-workload", "idle").CombinedOutput()
	if err != nil {
		t.Skipf("cannot make a container to look at: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	out, _ = exec.Command(binary, "doctor").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "leftovers") {
			if strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "labelled headroom but not proven headroom's") {
				t.Errorf("doctor's leftovers line %q: want it not failed, and the container said as not proven headroom's", l)
			}
			return
		}
	}
	t.Errorf("doctor said no leftovers line:\n%s", out)
}

// doctor warns, with what it means for a score, of what this engine's
// host does not charge to a task's limits (the tenth attacker's items 4
// and 5): on cgroup v1 TCP and UDP socket buffers are outside a
// container's memory limit (402 MiB held at 64 MiB), and under
// fuse-overlayfs a task's file-system work runs in a daemon outside its
// cgroup (2x the CPU limit). Each line is there exactly when `docker
// info` says so.
func TestDoctorWarnsOfWhatTheHostDoesNotCharge(t *testing.T) {
	needEngine(t)
	info, err := exec.Command("docker", "info", "--format", "{{.CgroupVersion}} {{.Driver}} {{json .SecurityOptions}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	var cgroup, driver, security string
	fmt.Sscan(string(info), &cgroup, &driver, &security)
	out, _ := exec.Command(binary, "doctor").CombinedOutput()
	for _, c := range []struct {
		when       bool
		name, says string
	}{
		{cgroup == "1", "socket memory", "cgroup v2 charges them"},
		{driver == "fuse-overlayfs", "file-system work", "outside the container's cgroup"},
		{!strings.Contains(security, "name=userns"), "per-user counters", "shared by every trial"},
	} {
		var got string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, c.name) {
				got = l
			}
		}
		switch {
		case c.when && (!strings.HasPrefix(got, "warn") || !strings.Contains(got, c.says) || !strings.Contains(got, "score")):
			t.Errorf("cgroup v%s, %s: doctor's %s line %q, want a warning saying %q and what it means for a score\n%s", cgroup, driver, c.name, got, c.says, out)
		case !c.when && got != "":
			t.Errorf("cgroup v%s, %s: doctor warns %q", cgroup, driver, got)
		}
	}
}
