//go:build hostile

package e2e

// The hostile-input suite's fourth round (the hint-free attacker after
// #40): a task's compose services (sidecars) are its code
// too. Each row drives the binary under test (hostileBin: this tree's, or
// HEADROOM_HOSTILE_BIN's to show it failing on a build without the fix).

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/headroom-eval/headroom/runner/docker"
)

// hostServer serves secret at /secret on every address of this host (the
// trial networks' gateways among them) and counts what asked for it.
func hostServer(t *testing.T, secret string) (port int, asked *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatalf("the host's server: %v", err)
	}
	asked = &atomic.Int64{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		fmt.Fprintln(w, secret)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port, asked
}

// Item 3: a Harbor task whose container may not reach the host (its
// environment says allow_internet = false, or an allowlist of one
// address, or no network but a public one for the agent's phase) and a
// compose service beside main, the two sharing a named volume. The
// service fetched the host's secret from a server listening on the host
// (reached at its network's gateway address) into the volume, and
// solve.sh read it from there: the policy held for main only. Nothing may
// answer the service, and the secret may be in no file and no output;
// under the allowlist main still reaches its service by name.
func TestHostileR4SidecarNoNetwork(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	for _, env := range []struct{ name, what, toml string }{
		{"no-network", "allow_internet = false", "allow_internet = false\n"},
		{"allowlist", "allowed_hosts = [\"192.0.2.1\"]", "network_mode = \"allowlist\"\nallowed_hosts = [\"192.0.2.1\"]\n[agent]\ntimeout_sec = 120.0\n"},
		{"agent-phase", "no-network, its [agent] public", "network_mode = \"no-network\"\n[agent]\ntimeout_sec = 120.0\nnetwork_mode = \"public\"\n"},
	} {
		t.Run(env.name, func(t *testing.T) { sidecarFetch(t, bin, env.name, env.what, env.toml) })
	}
}

func sidecarFetch(t *testing.T, bin, kind, what, environment string) {
	secret := "HOSTILE-R4-SIDECAR-" + randomHex(8)
	port, asked := hostServer(t, secret)
	// The service tries its own address's .1 and its /16's .0.1 (the
	// engine's gateways), once each, writes what it got (or why not), and
	// serves it at :8000.
	fetch := fmt.Sprintf(`import socket, urllib.request, os, http.server, functools
me = socket.gethostbyname(socket.gethostname())
a = me.split(".")
out = []
for gw in dict.fromkeys([".".join(a[:3] + ["1"]), ".".join(a[:2] + ["0", "1"])]):
    try:
        out.append("GOT " + gw + " " + urllib.request.urlopen("http://%%s:%d/secret" %% gw, timeout=2).read().decode().strip())
    except Exception as e:
        out.append("NOT " + gw + " " + type(e).__name__)
open("/shared/fetched.tmp", "w").write(" | ".join(out) + "\n")
os.rename("/shared/fetched.tmp", "/shared/fetched")
http.server.ThreadingHTTPServer(("", 8000), functools.partial(http.server.SimpleHTTPRequestHandler, directory="/shared")).serve_forever()
`, port)
	compose := "services:\n  main:\n    volumes:\n      - shared:/shared\n  fetcher:\n    image: " + docker.DebianImage + "\n" +
		"    command: [\"python3\", \"-c\", " + fmt.Sprintf("%q", fetch) + "]\n    volumes:\n      - shared:/shared\nvolumes:\n  shared: {}\n"
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r4-services/sidecar-" + kind
	reach := `python3 -c 'import urllib.request; print("SERVICE REACHED", urllib.request.urlopen("http://fetcher:8000/fetched", timeout=3).status)' 2>/dev/null || echo "SERVICE REACHED no"`
	harborTask(t, tasks, "sidecar-"+kind, name, map[string]string{
		"environment/docker-compose.yaml": compose,
		"task.toml":                       fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 128\n%s", name, environment),
		// Waits for the service's file (it writes it in seconds).
		"solution/solve.sh": "#!/bin/bash\nfor i in $(seq 150); do [ -e /shared/fetched ] && break; sleep 0.2; done\necho \"SIDECAR SAID: $(cat /shared/fetched 2>&1)\"\n" + reach + "\n",
	})
	row := runOracleRow(t, bin, tasks, name, secret)
	run, dir, recs, left, files, leaked, where := row.run, row.dir, row.recs, row.left, row.files, row.leaked, row.where
	said, reached := "", ""
	for _, body := range files {
		for _, l := range strings.Split(body, "\n") {
			// The lines solve.sh printed (not its commands' trace, nor a
			// record's shortened copy).
			if i := strings.Index(l, "SIDECAR SAID: "); i >= 0 && said == "" && !strings.ContainsAny(l[i:], "…$'") {
				said = strings.TrimSpace(l[i+len("SIDECAR SAID: "):])
			}
			if i := strings.Index(l, "SERVICE REACHED "); i >= 0 && reached == "" && !strings.ContainsAny(l[i:], "…$'\"") {
				reached = strings.TrimSpace(l[i+len("SERVICE REACHED "):])
			}
		}
	}
	if !strings.Contains(said, "NOT ") && !strings.Contains(said, "GOT ") {
		t.Errorf("solve.sh's SIDECAR SAID line holds no attempt of the service (%q): it did not run (exit %d)\n%s", said, run.code, run.stderr)
	}
	lost := 1 - len(recs)
	if kind == "allowlist" && reached != "200" {
		lost++
		t.Errorf("under the allowlist main did not reach its service at fetcher:8000 (SERVICE REACHED %q): the allowlist must let the task's container reach its services", reached)
	}
	nets := networksLeft(t, filepath.Base(dir))
	if len(nets) > 0 {
		t.Errorf("the experiment's networks are left: %v", nets)
	}
	if leaked > 0 {
		t.Errorf("the host's secret reached %v", where)
	}
	if n := asked.Load(); n > 0 {
		t.Errorf("the host's server answered the task's service %d times", n)
	}
	outcome, cause, _ := oneRecord(recs)
	letoutRow(t, fmt.Sprintf("a Harbor task (%s) whose compose service `fetcher`, sharing a named volume with main, fetches http://<its gateway>:%d/secret from a server on the host into the volume; solve.sh prints the volume's file and fetches http://fetcher:8000/", what, port),
		fmt.Sprintf("exit %d; %s · %s; solve.sh printed %.160q, service reached %q; host server asked %d times; networks left %d", run.code, outcome, orNone(cause), said, reached, asked.Load(), len(nets)),
		lost, leaked+int(asked.Load())+left+len(nets), 0)
}

// Item 4a: a task's services held memory outside its bound. Twenty
// services at the default 1 GiB beside a 64 MiB task loaded (and `tasks
// show` said "no limit" for each); admission counted the task's 64 MiB
// alone. The twenty are refused at load at the compose file's line; a
// task within the cap, its two services bounded 512 MiB and 1 GiB (the
// default), is shown with those bounds and admitted by them: on a host
// that can guarantee 2 GiB two of its trials (1.56 GiB each) never run at
// once.
func TestHostileR4SidecarMemory(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	svc := func(name, extra string) string {
		return "  " + name + ":\n    image: " + docker.DebianImage + "\n    command: [\"sleep\", \"infinity\"]\n" + extra
	}
	var many strings.Builder
	many.WriteString("services:\n  main:\n    mem_limit: 64m\n")
	for i := 1; i <= 20; i++ {
		many.WriteString(svc(fmt.Sprintf("s%d", i), ""))
	}
	harborTask(t, tasks, "many", "hostile-r4-services/many-services", map[string]string{"environment/docker-compose.yaml": many.String()})
	// main is lines 2-3, each service 3 lines from line 4: the ninth
	// beside main, s9, is at line 4 + 8*3.
	show := runBin(t, bin, nil, "tasks", "show", "hostile-r4-services/many-services", "--tasks-dir", tasks)
	refused := show.code != 0 && strings.Contains(show.stderr, "docker-compose.yaml:28: service s9 is the 10th: a task runs at most 8 services")
	lost, forged := 0, 0
	if !refused {
		lost++
		t.Errorf("tasks show of the 20-service task: exit %d, want it refused at docker-compose.yaml:28 (s9):\n%s%s", show.code, show.stdout, show.stderr)
	}
	forged += strings.Count(show.stdout, "no limit")
	letoutRow(t, "`tasks show` of a Harbor task whose docker-compose.yaml has main (64 MiB) and 20 services with no mem_limit",
		fmt.Sprintf("exit %d; %.160q; \"no limit\" printed %d times", show.code, firstLineWith(show.stdout+show.stderr, "service"), strings.Count(show.stdout, "no limit")), lost, 0, forged)

	// Within the cap: admitted by its services' bounds.
	name := "hostile-r4-services/two-services"
	harborTask(t, tasks, "two", name, map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    mem_limit: 64m\n" + svc("small", "    mem_limit: 512m\n") + svc("big", ""),
		"solution/solve.sh":               "#!/bin/bash\necho \"RAN FROM $(date +%s.%N)\"\nsleep 3\necho \"RAN TO $(date +%s.%N)\"\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r4-services/") })
	show = runBin(t, bin, nil, "tasks", "show", name, "--tasks-dir", tasks)
	forged = 0
	for _, want := range []string{"small", "limit 512MiB", "big", "limit 1GiB (the default)"} {
		if !strings.Contains(show.stdout, want) {
			forged++
			t.Errorf("tasks show of %s does not say %q (each sidecar's real bound):\n%s%s", name, want, show.stdout, show.stderr)
		}
	}
	forged += strings.Count(show.stdout, "no limit")
	memOut, err := exec.Command("docker", "info", "-f", "{{.MemTotal}}").Output()
	total, _ := strconv.ParseInt(strings.TrimSpace(string(memOut)), 10, 64)
	if err != nil || total < 3<<30 {
		t.Fatalf("docker info MemTotal %q (%v): the row needs a host of 3 GiB or more", memOut, err)
	}
	// A reserve that leaves 2 GiB to guarantee.
	reserve := fmt.Sprintf("%dM", (total-2<<30)>>20)
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "1x", "--repeats", "2", "--concurrency", "2", "--reserve", reserve, "--out", out)
	dir, recs, left := records(t, out)
	type span struct{ from, to float64 }
	var spans []span
	for p, body := range experimentFiles(t, out) {
		if !strings.HasSuffix(p, "log.txt") {
			continue
		}
		var s span
		for _, l := range strings.Split(body, "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "RAN" {
				v, _ := strconv.ParseFloat(f[2], 64)
				if f[1] == "FROM" {
					s.from = v
				} else if f[1] == "TO" {
					s.to = v
				}
			}
		}
		if s.from > 0 && s.to > 0 {
			spans = append(spans, s)
		}
	}
	overlapped := 0
	if len(spans) != 2 {
		t.Errorf("%d trials' solve.sh ran start to end, want 2 (exit %d)\n%s", len(spans), run.code, run.stderr)
	} else if spans[0].from < spans[1].to && spans[1].from < spans[0].to {
		overlapped = 1
		t.Errorf("the two trials ran at once (%.1f–%.1f and %.1f–%.1f): each holds 64 MiB + 512 MiB + 1 GiB and the host can guarantee 2 GiB", spans[0].from, spans[0].to, spans[1].from, spans[1].to)
	}
	nets := networksLeft(t, filepath.Base(dir))
	letoutRow(t, fmt.Sprintf("`tasks show` and a run (--repeats 2 --concurrency 2 --reserve %s: 2 GiB to guarantee) of a Harbor task, main 64 MiB, services `small` (mem_limit 512m) and `big` (none)", reserve),
		fmt.Sprintf("%q; exit %d; %d records; ran at once %v; networks left %d", firstLineWith(show.stdout, "big"), run.code, len(recs), overlapped == 1, len(nets)),
		2-len(recs), overlapped+left+len(nets), forged)
}
