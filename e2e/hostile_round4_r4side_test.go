//go:build hostile

package e2e

// The hostile-input suite's fourth round (the hint-free attacker after
// #40), branch r4side: a task's compose services (sidecars) are its code
// too. Each row drives the binary under test (hostileBin: this tree's, or
// HEADROOM_HOSTILE_BIN's to show it failing on a build without the fix).

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
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

// Item 3: a Harbor task with allow_internet = false and a compose service
// beside main, the two sharing a named volume. The service fetched the
// host's secret from a server listening on the host (reached at its
// network's gateway address) into the volume, and solve.sh read it from
// there: allow_internet = false held for main only. Nothing may answer
// the service, and the secret may be in no file and no output.
func TestHostileR4SidecarNoNetwork(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	secret := "HOSTILE-R4-SIDECAR-" + randomHex(8)
	port, asked := hostServer(t, secret)
	// The service tries its own address's .1 and its /16's .0.1 (the
	// engine's gateways), twice, and writes what it got (or why not).
	fetch := fmt.Sprintf(`import socket, urllib.request, time
me = socket.gethostbyname(socket.gethostname())
a = me.split(".")
out = []
for gw in dict.fromkeys([".".join(a[:3] + ["1"]), ".".join(a[:2] + ["0", "1"])]):
    for _ in range(2):
        try:
            out.append("GOT " + gw + " " + urllib.request.urlopen("http://%%s:%d/secret" %% gw, timeout=2).read().decode().strip())
            break
        except Exception as e:
            out.append("NOT " + gw + " " + type(e).__name__)
            time.sleep(0.2)
open("/shared/fetched.tmp", "w").write(" | ".join(out) + "\n")
import os; os.rename("/shared/fetched.tmp", "/shared/fetched")
time.sleep(3600)
`, port)
	compose := "services:\n  main:\n    volumes:\n      - shared:/shared\n  fetcher:\n    image: " + docker.DebianImage + "\n" +
		"    command: [\"python3\", \"-c\", " + fmt.Sprintf("%q", fetch) + "]\n    volumes:\n      - shared:/shared\nvolumes:\n  shared: {}\n"
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r4/sidecar-net"
	harborTask(t, tasks, "sidecar-net", name, map[string]string{
		"environment/docker-compose.yaml": compose,
		// Waits for the service's file (it writes it in seconds).
		"solution/solve.sh": "#!/bin/bash\nfor i in $(seq 150); do [ -e /shared/fetched ] && break; sleep 0.2; done\necho \"SIDECAR SAID: $(cat /shared/fetched 2>&1)\"\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "1x", "--repeats", "1", "--out", out)
	dir, recs, left := records(t, out)
	files := experimentFiles(t, out)
	leaked, where := countIn(secret, files, map[string]string{"stdout": run.stdout, "stderr": run.stderr})
	said := ""
	for _, body := range files {
		for _, l := range strings.Split(body, "\n") {
			if i := strings.Index(l, "SIDECAR SAID: "); i >= 0 && said == "" {
				said = strings.TrimSpace(l[i+len("SIDECAR SAID: "):])
			}
		}
	}
	if !strings.Contains(said, "NOT ") && !strings.Contains(said, "GOT ") {
		t.Errorf("solve.sh's SIDECAR SAID line holds no attempt of the service (%q): it did not run (exit %d)\n%s", said, run.code, run.stderr)
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
	letoutRow(t, fmt.Sprintf("a Harbor task with allow_internet = false whose compose service `fetcher`, sharing a named volume with main, fetches http://<its gateway>:%d/secret from a server on the host into the volume; solve.sh prints the volume's file", port),
		fmt.Sprintf("exit %d; %s · %s; solve.sh printed %.160q; host server asked %d times; networks left %d", run.code, outcome, orNone(cause), said, asked.Load(), len(nets)),
		1-len(recs), leaked+int(asked.Load())+left+len(nets), 0)
}
