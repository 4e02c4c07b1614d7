//go:build hostile

package e2e

// The hostile-input suite's fourth round (issue #40, "nothing from the
// host, nothing of anyone else's"): the egress allowlist
// and the trial's own name-resolution files. The row drives the binary
// under test (hostileBin: this tree's, or HEADROOM_HOSTILE_BIN's to show
// it failing on a build without the fix).

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner/docker"
)

// hostAddresses are this machine's addresses a trial can reach: the
// engine's default bridge's gateway, and another IPv4 address of the
// host's (not a bridge's; the gateway again when there is none).
func hostAddresses(t *testing.T) (gateway, other string) {
	t.Helper()
	out, err := exec.Command("docker", "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Gateway}}{{end}}", "bridge").Output()
	gateway = strings.TrimSpace(string(out))
	if ifc, ierr := net.InterfaceByName("docker0"); net.ParseIP(gateway) == nil && ierr == nil {
		// The engine leaves the gateway out of IPAM when it chose it.
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ip, _, err := net.ParseCIDR(a.String()); err == nil && ip.To4() != nil {
				gateway = ip.String()
			}
		}
	}
	if net.ParseIP(gateway) == nil {
		t.Skipf("the default bridge's gateway: %q %v, and no docker0 address", out, err)
	}
	other = gateway
	ifcs, _ := net.Interfaces()
	for _, ifc := range ifcs {
		if ifc.Flags&net.FlagLoopback != 0 || ifc.Flags&net.FlagUp == 0 || ifc.Name == "docker0" || strings.HasPrefix(ifc.Name, "br-") || strings.HasPrefix(ifc.Name, "veth") {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ip, _, err := net.ParseCIDR(a.String()); err == nil && ip.To4() != nil && other == gateway {
				other = ip.String()
			}
		}
	}
	return gateway, other
}

// Round four, item 2: a Harbor task's allowed_hosts names deb.debian.org
// and proxy.golang.org; its image's ENTRYPOINT appends "<the host's
// gateway> deb.debian.org" to /etc/hosts and "nameserver <another address
// of the host's>" to /etc/resolv.conf before the allowlist is written.
// The netpolicy helper joined the trial's namespace, so it read both
// files: main allowed the gateway (as deb.debian.org) and every port of
// the "name server". The row's own listener on the host, at both
// addresses, must accept nothing; the allowed name must be reachable by
// name from the trial (resolved by the engine's resolver, which forwards
// from the trial's namespace).
func TestHostileR4AllowlistResolvConf(t *testing.T) {
	needEngine(t)
	allowedName, alsoAllowed := "proxy.golang.org", "deb.debian.org"
	var allowedIP string
	for _, h := range []string{allowedName, alsoAllowed} {
		addrs, err := net.DefaultResolver.LookupHost(context.Background(), h)
		if err != nil || len(addrs) == 0 {
			t.Skipf("%s does not resolve on this host (%v): the row needs a name that does", h, err)
		}
		if h == allowedName {
			allowedIP = addrs[0]
		}
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(allowedIP, "443"), 5*time.Second); err != nil {
		t.Skipf("%s (%s) port 443 is not reachable from this host: %v", allowedName, allowedIP, err)
	} else {
		c.Close()
	}
	bin := hostileBin(t)
	gateway, other := hostAddresses(t)
	// The forbidden server: the row's own listener, on every address of
	// the host's; what it accepts is counted here, not taken from the
	// trial's word.
	ln := listenOnHost(t)
	port := ln.port
	hijack := fmt.Sprintf("#!/bin/sh\necho '%s %s' >> /etc/hosts\necho 'nameserver %s' >> /etc/resolv.conf\nexec \"$@\"\n", gateway, alsoAllowed, other)
	probe := fmt.Sprintf(`#!/bin/bash
p() { timeout 8 bash -c "echo > /dev/tcp/$1/$2" 2>/dev/null && echo reachable || echo refused; }
echo "PROBE hosts-line $(grep -c %[1]s /etc/hosts) ns-line $(grep -c 'nameserver %[2]s' /etc/resolv.conf); gateway %[3]s:%[4]d $(p %[3]s %[4]d); name-server %[2]s:%[4]d $(p %[2]s %[4]d); %[5]s:443 by name $(p %[5]s 443)"
`, alsoAllowed, other, gateway, port, allowedName)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r4/allowlist-resolvconf"
	harborTask(t, tasks, "allowlist", name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 256\nnetwork_mode = \"allowlist\"\nallowed_hosts = [%q, %q]\n",
			name, alsoAllowed, allowedName),
		"environment/hijack.sh":  hijack,
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nCOPY hijack.sh /hijack.sh\nRUN chmod 755 /hijack.sh\nENTRYPOINT [\"/hijack.sh\"]\n",
		"solution/solve.sh":      probe,
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	if run.code != 0 {
		t.Logf("headroom run exited %d:\n%s", run.code, run.stderr)
	}
	dir, recs, left := records(t, out)
	// What the probe printed (its line as run, not solve.sh's source).
	said := ""
	line := regexp.MustCompile(`PROBE hosts-line \d+ ns-line \d+; gateway [^;]+; name-server [^;]+; \S+:443 by name (reachable|refused)`)
	for _, body := range experimentFiles(t, out) {
		if m := line.FindString(body); m != "" {
			said = m
			break
		}
	}
	if said == "" {
		t.Errorf("the probe's PROBE line is in no file of the experiment: it did not run (exit %d)\n%s", run.code, run.stderr)
	}
	if !strings.Contains(said, "hosts-line 1 ns-line 1") {
		t.Errorf("probe %q: the ENTRYPOINT's lines are not in the trial's /etc/hosts and /etc/resolv.conf: the row injected nothing", said)
	}
	nets := networksLeft(t, filepath.Base(dir))
	if len(nets) > 0 {
		t.Errorf("the experiment's networks are left: %v", nets)
	}
	got := ln.accepted()
	leaked := len(got)
	if leaked > 0 {
		t.Errorf("the row's listener (forbidden: not in allowed_hosts) accepted %d connection(s) from the trial: %v", leaked, got)
	}
	lost := 1 - len(recs)
	if !strings.Contains(said, allowedName+":443 by name reachable") {
		lost++
		t.Errorf("probe %q: %s (allowed) is not reachable by name from the trial", said, allowedName)
	}
	outcome, cause, _ := oneRecord(recs)
	letoutRow(t, fmt.Sprintf("a Harbor task with `allowed_hosts = [%q, %q]` whose image's ENTRYPOINT appends `%s %s` to /etc/hosts and `nameserver %s` to /etc/resolv.conf; its solve.sh connects to the row's own listener at %s:%d and %s:%d, and to %s:443 by name",
		alsoAllowed, allowedName, gateway, alsoAllowed, other, gateway, port, other, port, allowedName),
		fmt.Sprintf("exit %d; %s · %s; probe printed %q; the listener accepted %d; networks left %d", run.code, outcome, orNone(cause), said, leaked, len(nets)),
		lost, leaked+left+len(nets), 0)
}
