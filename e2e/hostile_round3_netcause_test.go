//go:build hostile

package e2e

// The hostile-input suite's third round (the hint-free attacker after
// #40), branch netcause: a trial's network, a container's own exit code,
// limits changed under a step, and the docker run a task is shown as.
// Each row drives the binary under test (hostileBin: this tree's, or
// HEADROOM_HOSTILE_BIN's to show it failing on a build without the fix).

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner/docker"
)

// victim starts a container of the test's own on the engine's default
// bridge serving secret at http://<its address>:8000/secret, waits until
// it answers from here, and returns its address and the bridge's subnet.
func victim(t *testing.T, secret string) (ip, subnet string) {
	t.Helper()
	serve := fmt.Sprintf("mkdir -p /srv && echo %s > /srv/secret && cd /srv && exec python3 -m http.server 8000", secret)
	out, err := exec.Command("docker", "run", "-d", "--label", "headroom-e2e-r3-netcause=1", "--network", "bridge", docker.DebianImage, "sh", "-c", serve).CombinedOutput()
	if err != nil {
		t.Fatalf("the victim container: %v %s", err, out)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
	ipOut, err := exec.Command("docker", "inspect", "-f", "{{.NetworkSettings.Networks.bridge.IPAddress}}", id).Output()
	ip = strings.TrimSpace(string(ipOut))
	if err != nil || ip == "" {
		t.Fatalf("the victim's address: %q %v", ipOut, err)
	}
	subOut, err := exec.Command("docker", "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}}{{end}}", "bridge").Output()
	subnet = strings.TrimSpace(string(subOut))
	if err != nil || subnet == "" {
		t.Fatalf("the default bridge's subnet: %q %v", subOut, err)
	}
	url := "http://" + ip + ":8000/secret"
	waitForCond(t, "the victim serving "+url, 60*time.Second, func() bool {
		c := http.Client{Timeout: time.Second}
		r, err := c.Get(url)
		if err != nil {
			return false
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return strings.Contains(string(b), secret)
	})
	return ip, subnet
}

// networksLeft lists the engine's networks labelled with experiment id.
func networksLeft(t *testing.T, id string) []string {
	t.Helper()
	out, err := exec.Command("docker", "network", "ls", "-q", "--filter", "label=headroom.experiment="+id).Output()
	if err != nil {
		t.Fatalf("docker network ls: %v", err)
	}
	return strings.Fields(string(out))
}

// Item 1: a Harbor task with a network (allow_internet is Harbor's
// default, true) ran on the engine's default bridge, where its solve.sh
// reached a container headroom never made and got its secret into the
// trial's log. Every address of the default bridge's /24 at the victim's
// port is tried (and the victim's own first); nothing may answer, and the
// trial's own network is gone with the trial.
func TestHostileR3NetworkOfItsOwn(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	secret := "HOSTILE-R3-BRIDGE-" + randomHex(8)
	ip, subnet := victim(t, secret)
	prefix := ip[:strings.LastIndexByte(ip, '.')+1]
	probe := fmt.Sprintf(`import concurrent.futures, urllib.request
def get(n):
    url = "http://%s%%d:8000/secret" %% n
    try:
        return url + " " + urllib.request.urlopen(url, timeout=2).read().decode().strip()
    except Exception as e:
        return None
hosts = [int(%q.rsplit(".", 1)[1])] + list(range(2, 255))
with concurrent.futures.ThreadPoolExecutor(64) as ex:
    got = [r for r in ex.map(get, hosts) if r]
print("REACHED", len(got), got)
`, prefix, ip)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r3/bridge"
	harborTask(t, tasks, "bridge", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 256\n", name),
		"solution/solve.sh": "#!/bin/bash\npython3 - <<'EOF'\n" + probe + "EOF\n",
	})
	row := runOracleRow(t, bin, tasks, name, secret)
	run, dir, recs, left, files, leaked, where := row.run, row.dir, row.recs, row.left, row.files, row.leaked, row.where
	// What the probe printed, from the trial's log.
	said := ""
	for _, body := range files {
		for _, l := range strings.Split(body, "\n") {
			if i := strings.Index(l, "REACHED "); i >= 0 && said == "" {
				said = strings.TrimSpace(l[i:])
			}
		}
	}
	if said == "" {
		t.Errorf("the probe's REACHED line is in no file of the experiment: it did not run (exit %d)\n%s", run.code, run.stderr)
	}
	nets := networksLeft(t, filepath.Base(dir))
	if len(nets) > 0 {
		t.Errorf("the experiment's networks are left: %v", nets)
	}
	outcome, cause, _ := oneRecord(recs)
	if leaked > 0 {
		t.Errorf("the victim's secret reached %v", where)
	}
	letoutRow(t, fmt.Sprintf("a Harbor task with a network (allow_internet unset) probes %s2-254:8000 (the default bridge %s), a victim container of the row's own serving a secret at %s:8000", prefix, subnet, ip),
		fmt.Sprintf("exit %d; %s · %s; probe printed %.60q; networks left %d", run.code, outcome, orNone(cause), said, len(nets)),
		1-len(recs), leaked+left+len(nets), 0)
}

// Item 2: the task's PID 1 exits with code 137 by itself (no kill, no
// stop, no OOM: no engine event says so) under an 8 s solve.sh. Main took
// any exit above 128 for a signal from outside and recorded infra-error
// · "the engine went away under the trial"; the exit 0 control was
// already a plain failure.
func TestHostileR3Exit137ByItself(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	for _, code := range []int{137, 143} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			tasks := filepath.Join(t.TempDir(), "tasks")
			name := fmt.Sprintf("hostile-r3/exit%d", code)
			harborTask(t, tasks, "exit", name, map[string]string{
				"environment/Dockerfile": fmt.Sprintf("FROM %s\nENTRYPOINT [\"/bin/sh\", \"-c\", \"sleep 3; exit %d\"]\n", docker.DebianImage, code),
				"solution/solve.sh":      "#!/bin/bash\necho solving; sleep 8; echo done\n",
			})
			t.Cleanup(func() { removeTaskImages(t, name) })
			out := filepath.Join(t.TempDir(), "out")
			run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
			_, recs, left := records(t, out)
			exitedRow(t, fmt.Sprintf("a Harbor image's `ENTRYPOINT [\"/bin/sh\",\"-c\",\"sleep 3; exit %d\"]` ends by itself under an 8 s solve.sh", code), run, recs, left, fmt.Sprintf("exit %d", code))
		})
	}
}

// Item 3: someone runs `docker update --cpuset-cpus 0` on the trial's
// container mid-step. Main watched the CPU quota, memory and pids only:
// the step ran pinned to one CPU and was the ratio's evidence (passed).
func TestHostileR3CpusetChanged(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r3/cpuset"
	harborTask(t, tasks, "cpuset", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\necho solving; sleep 10; echo done\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	l := startLive(t, bin, oracleArgs(tasks, name, out)...)
	var id string
	waitForCond(t, "the trial's step `sleep 10` running", 3*time.Minute, func() bool {
		ps, err := exec.Command("docker", "ps", "-q", "--filter", "label=headroom.task="+name).Output()
		if ids := strings.Fields(string(ps)); err == nil && len(ids) == 1 {
			id = ids[0]
			top, _ := exec.Command("docker", "top", id).Output()
			return strings.Contains(string(top), "sleep 10")
		}
		return false
	})
	if b, err := exec.Command("docker", "update", "--cpuset-cpus", "0", id).CombinedOutput(); err != nil {
		t.Fatalf("docker update --cpuset-cpus 0: %v %s", err, b)
	}
	code := l.wait(3 * time.Minute)
	_, recs, left := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	forged := 0
	if outcome != "infra-error" || cause != "limit-changed" || !strings.Contains(reason, "cpuset") {
		forged = 1
		t.Errorf("exit %d: %s · %q: %s; want infra-error · limit-changed naming the cpuset\n%s", code, outcome, cause, reason, l.stderr())
	}
	letoutRow(t, "`docker update --cpuset-cpus 0` of the trial's container under a 10 s solve.sh",
		fmt.Sprintf("exit %d; %s · %s: %q", code, outcome, orNone(cause), reason), 1-len(recs), left, forged)
}

// Item 4: a Harbor task's environment/docker-compose.yaml gives its main
// service `user: "0 $(touch …/PWNED) x"`. Main printed `tasks show`'s
// container line (and the console's docker run equivalent) with the user
// bare: pasted into a shell, the touch ran. The user is refused at load
// naming the compose file's line; whatever is still printed is taken
// through a shell (`set --`), and nothing may run.
func TestHostileR3UserNotQuoted(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	pwned := filepath.Join(root, "PWNED")
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r3/user"
	harborTask(t, tasks, "user", name, map[string]string{
		"environment/docker-compose.yaml": fmt.Sprintf("services:\n  main:\n    user: \"0 $(touch %s) x\"\n", pwned),
	})
	show := runBin(t, bin, nil, "tasks", "show", name, "--tasks-dir", tasks)
	all := show.stdout + "\n" + show.stderr
	// What it printed as flags, as someone would paste it.
	pasted := ""
	for _, l := range strings.Split(all, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "container" {
			pasted = strings.TrimSpace(strings.SplitN(strings.TrimSpace(l), "(every ratio", 2)[0][len("container"):])
		}
	}
	if pasted != "" {
		if out, err := exec.Command("sh", "-c", "set -- "+pasted).CombinedOutput(); err != nil {
			t.Logf("sh -c 'set -- %s': %v %s", pasted, err, out)
		}
	}
	ran := 0
	if _, err := exec.Command("test", "-e", pwned).CombinedOutput(); err == nil {
		ran = 1
		t.Errorf("pasting the printed flags `%s` ran the task's command: %s exists", pasted, pwned)
	}
	refused := show.code != 0 && strings.Contains(all, "docker-compose.yaml:3:") && strings.Contains(all, "is not a user")
	forged := 0
	if !refused {
		forged = 1
		t.Errorf("exit %d; want the user refused at docker-compose.yaml:3:\n%s", show.code, all)
	}
	said := strings.TrimSpace(show.stderr)
	if pasted != "" {
		said = "container " + pasted
	}
	letoutRow(t, "`tasks show` of a Harbor task whose docker-compose.yaml says `user: \"0 $(touch PWNED) x\"`, its container flags pasted into sh",
		fmt.Sprintf("exit %d; %.200q; PWNED made: %v", show.code, said, ran == 1), 0, ran, forged)
}
