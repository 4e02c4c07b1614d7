package docker

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
)

// An allowlist's names are resolved by headroom's own resolver (here a
// fake standing for the host's), never by the trial's: what the helper
// is given is addresses, and the engine's name servers as dns: entries
// (port 53 only), with nothing read from the trial's files.
func TestAllowlistNamesResolvedOnTheHost(t *testing.T) {
	var asked []string
	lookup := func(_ context.Context, h string) ([]net.IPAddr, error) {
		asked = append(asked, h)
		if h == "pypi.org" {
			return []net.IPAddr{{IP: net.ParseIP("151.101.0.223")}, {IP: net.ParseIP("2a04:4e42::223")}}, nil
		}
		return nil, errors.New("no such host")
	}
	dns := []net.IP{net.ParseIP("10.255.255.53")}
	entries, notes := allowlistEntries(context.Background(), []string{"pypi.org", "10.1.2.3/8", "192.0.2.7", "*.pypi.org", "nope.invalid"}, lookup, dns)
	want := "151.101.0.223 2a04:4e42::223 10.0.0.0/8 192.0.2.7 dns:10.255.255.53"
	if got := strings.Join(entries, " "); got != want {
		t.Errorf("entries %q, want %q", got, want)
	}
	if got := strings.Join(asked, " "); got != "pypi.org nope.invalid" {
		t.Errorf("looked up %q, want the names only (pypi.org nope.invalid)", got)
	}
	if got := strings.Join(notes, "; "); !strings.Contains(got, "*.pypi.org: a wildcard") || !strings.Contains(got, "nope.invalid: no such host; not reachable") {
		t.Errorf("notes %q, want the wildcard and the name that did not resolve said", got)
	}
	// Addresses only: no name to resolve, so no name server is opened.
	entries, _ = allowlistEntries(context.Background(), []string{"192.0.2.7"}, lookup, dns)
	if got := strings.Join(entries, " "); got != "192.0.2.7" {
		t.Errorf("entries %q, want only 192.0.2.7: no name was allowed, so no name server", got)
	}
}

// The name servers let through (port 53 only) are those the engine's
// resolver forwards to, by the engine's rules over the host's files.
func TestEngineNameServers(t *testing.T) {
	for _, c := range []struct {
		name          string
		host, systemd string // "" is a missing file
		want          string
	}{
		{"the host's, its loopback ones left out", "# x\nnameserver 10.255.255.53\nnameserver 127.0.0.1\nnameserver fe80::1%eth0\nsearch lan\n", "", "10.255.255.53 fe80::1"},
		{"systemd-resolved's stub: its upstreams", "nameserver 127.0.0.53\noptions edns0\n", "nameserver 192.0.2.53\n", "192.0.2.53"},
		{"only loopback and no upstream file: the engine's defaults", "nameserver 127.0.0.1\n", "", "8.8.8.8 8.8.4.4"},
		{"no file: the engine's defaults", "", "", "8.8.8.8 8.8.4.4"},
	} {
		read := func(p string) ([]byte, error) {
			body := map[string]string{hostResolvConf: c.host, systemdResolvConf: c.systemd}[p]
			if body == "" {
				return nil, os.ErrNotExist
			}
			return []byte(body), nil
		}
		var got []string
		for _, ip := range engineNameServers(read) {
			got = append(got, ip.String())
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}
}
