//go:build hostile

package e2e

// The hostile-input suite's fourth round: a task's
// Dockerfile is the task's code, run by the engine before any trial. Its
// RUN steps were built on the engine's default bridge (another
// container's server, the host's) whatever the task's network, and with
// no memory bound. Each row drives the binary under test (hostileBin:
// this tree's, or HEADROOM_HOSTILE_BIN's to show it failing on a build
// without the fix).

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/runner/docker"
)

// hostService serves secret at http://<the default bridge's gateway, the
// host>:<port>/secret from this test (a service only the host has), and
// returns the address.
func hostService(t *testing.T, secret string) string {
	t.Helper()
	// The engine's default bridge's interface (docker0) holds the host's
	// address on it (IPAM's Gateway is empty for it on Docker 20.10).
	out, err := exec.Command("docker", "network", "inspect", "-f", `{{index .Options "com.docker.network.bridge.name"}}`, "bridge").Output()
	ifName := strings.TrimSpace(string(out))
	if err != nil || ifName == "" {
		t.Fatalf("the default bridge's interface: %q %v", out, err)
	}
	gw := ""
	if ifc, err := net.InterfaceByName(ifName); err == nil {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				gw = n.IP.String()
			}
		}
	}
	if gw == "" {
		t.Skipf("the engine's default bridge %s is not on this host: the host's service cannot be served on it", ifName)
	}
	l, err := net.Listen("tcp", gw+":0")
	if err != nil {
		t.Fatalf("listen on the host's bridge address %s: %v", gw, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, secret) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/secret"
}

// buildNetworksLeft lists the engine's networks headroom made for builds
// of images named after prefix.
func buildNetworksLeft(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := exec.Command("docker", "network", "ls", "--format", `{{.Name}} {{.Label "headroom.build"}}`).Output()
	if err != nil {
		t.Fatalf("docker network ls: %v", err)
	}
	var left []string
	slug := strings.ReplaceAll(strings.ToLower(prefix), "/", "-")
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 2 && strings.Contains(f[1], slug) {
			left = append(left, f[0])
		}
	}
	return left
}

// Item 1: a Dockerfile RUN fetches another container's secret (a victim
// of the row's own on the engine's default bridge) and, for a task with
// no network, a service only the host serves: into the image, the build's
// output and, through solve.sh, the trial's log. A task with no network
// (allow_internet = false) builds with none; a task with a network builds
// on a bridge of its own, which reaches no other container (the host's
// gateway it reaches, as its trial does: docs/PARITY.md).
func TestHostileR4BuildNetwork(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	secret := "HOSTILE-R4-BUILD-" + randomHex(8)
	hostSecret := "HOSTILE-R4-HOST-" + randomHex(8)
	ip, subnet := victim(t, secret)
	hostURL := hostService(t, hostSecret)
	for _, c := range []struct {
		name, internet string
		urls           []string
	}{
		{"none", "false", []string{"http://" + ip + ":8000/secret", hostURL}},
		{"network", "true", []string{"http://" + ip + ":8000/secret"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			quoted := make([]string, len(c.urls))
			for i, u := range c.urls {
				quoted[i] = fmt.Sprintf("%q", u)
			}
			// The nonce: no builder's cache may answer for this run's RUN.
			fetch := fmt.Sprintf(`# nonce %s
import urllib.request
for u in [%s]:
    try:
        print("FETCHED", u, urllib.request.urlopen(u, timeout=3).read().decode().strip())
    except Exception as e:
        print("NOT FETCHED", u, type(e).__name__)
`, randomHex(8), strings.Join(quoted, ", "))
			tasks := filepath.Join(t.TempDir(), "tasks")
			name := "hostile-r4/build-" + c.name
			harborTask(t, tasks, c.name, name, map[string]string{
				"task.toml":              fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = %s\n", name, c.internet),
				"environment/fetch.py":   fetch,
				"environment/Dockerfile": "FROM " + docker.DebianImage + "\nCOPY fetch.py /fetch.py\nRUN python3 /fetch.py > /leak 2>&1; cat /leak\n",
				"solution/solve.sh":      "#!/bin/bash\ncat /leak\n",
			})
			row := runOracleRow(t, bin, tasks, name, secret)
			run, recs, left, files, leaked, where := row.run, row.recs, row.left, row.files, row.leaked, row.where
			std := map[string]string{"stdout": run.stdout, "stderr": run.stderr}
			hostLeaked, hostWhere := countIn(hostSecret, files, std)
			nets := buildNetworksLeft(t, name)
			said := ""
			for _, body := range append([]string{run.stderr}, mapValues(files)...) {
				for _, l := range strings.Split(body, "\n") {
					if strings.Contains(l, "FETCHED ") && said == "" {
						said = strings.TrimSpace(l)
					}
				}
			}
			if said == "" {
				t.Errorf("the build's fetch printed nothing anywhere: it did not run (exit %d)\n%s", run.code, run.stderr)
			}
			if leaked > 0 {
				t.Errorf("the victim's secret reached %v", where)
			}
			if hostLeaked > 0 {
				t.Errorf("the host's secret reached %v", hostWhere)
			}
			if len(nets) > 0 {
				t.Errorf("the build's networks are left: %v", nets)
			}
			outcome, cause, _ := oneRecord(recs)
			also := ""
			if len(c.urls) > 1 {
				also = " and " + c.urls[1] + " (a service of the host's, on its default-bridge address)"
			}
			letoutRow(t, fmt.Sprintf("a Harbor task with allow_internet = %s whose Dockerfile RUN fetches %s (a victim container of the row's own on the default bridge %s)%s into the image; solve.sh prints it", c.internet, c.urls[0], subnet, also),
				fmt.Sprintf("exit %d; %s · %s; the build printed %.80q; build networks left %d", run.code, outcome, orNone(cause), said, len(nets)),
				1-len(recs), leaked+hostLeaked+left+len(nets), 0)
		})
	}
}

// mapValues is m's values.
func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Item 4b: a Dockerfile RUN takes 2.5 GiB (bytes written, resident),
// past the default build bound (the larger of 2 GiB and the task's 128
// MiB). Main built it unbounded: the build took what it asked and the
// trial passed. The build must be killed at its bound, and the task's
// trial recorded as not run, naming the bound and the flag that lifts it.
func TestHostileR4BuildMemory(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r4/build-memory"
	harborTask(t, tasks, "memory", name, map[string]string{
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nRUN python3 -c \"b = b'x' * (2560 << 20); print('ALLOCATED', len(b) >> 20, 'MiB', '" + randomHex(8) + "')\"\n",
	})
	// A task beside it that builds, so the sweep runs and records it.
	other := "hostile-r4/build-memory-ok"
	harborTask(t, tasks, "ok", other, nil)
	t.Cleanup(func() { removeTaskImages(t, "hostile-r4/build-memory") })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name+","+other, out)...)
	_, all, left := records(t, out)
	var recs []map[string]any
	for _, r := range all {
		if r["task"] == name {
			recs = append(recs, r)
		}
	}
	files := experimentFiles(t, out)
	allocated, where := countIn("ALLOCATED 2560 MiB", files, map[string]string{"stdout": run.stdout, "stderr": run.stderr})
	if allocated > 0 {
		t.Errorf("the build's RUN took its 2.5 GiB: %v", where)
	}
	outcome, cause, reason := oneRecord(recs)
	forged := 0
	if outcome != "infra-error" || !strings.Contains(reason, "the build of task "+name+" was killed at its memory bound 2GiB") || !strings.Contains(reason, "--build-memory") {
		forged = 1
		t.Errorf("exit %d: %s · %s: %q; want an infra-error naming the build's memory bound and --build-memory\n%s", run.code, outcome, orNone(cause), reason, run.stderr)
	}
	letoutRow(t, "a Harbor task (memory_mb = 128) whose Dockerfile RUN writes 2.5 GiB (`python3 -c \"b = b'x' * (2560 << 20)\"`), run beside a task that builds",
		fmt.Sprintf("exit %d; %s · %s: %.240q", run.code, outcome, orNone(cause), reason), 1-len(recs), allocated+left, forged)
}
