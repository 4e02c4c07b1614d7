package workload

import (
	"bytes"
	"strings"
	"testing"
)

// The helper resolves nothing: the names a trial's allowlist gives are
// turned into addresses by headroom on the host, since the helper's
// /etc/hosts and /etc/resolv.conf are the trial's own (issue #40, round
// four). A name server is let through on port 53 only, never every port.
func TestNetpolicyEntriesAreAddresses(t *testing.T) {
	got, err := parseAllowed([]string{"203.0.113.80", "10.0.0.0/8", "2001:db8::1", "dns:10.255.255.53", "dns:2001:db8::53"})
	if err != nil {
		t.Fatalf("parseAllowed: %v", err)
	}
	var shown []string
	for _, a := range got {
		shown = append(shown, a.String())
	}
	want := "203.0.113.80/32 | 10.0.0.0/8 | 2001:db8::1/128 | 10.255.255.53/32 (udp/53, tcp/53) | 2001:db8::53/128 (udp/53, tcp/53)"
	if s := strings.Join(shown, " | "); s != want {
		t.Errorf("parseAllowed gave %s\nwant %s (addresses every port, name servers udp and tcp 53 only)", s, want)
	}
	for i := 0; i < 3; i++ {
		if got[i].Ports != nil {
			t.Errorf("entry %d (%s): ports %v, want every port (nil)", i, got[i], got[i].Ports)
		}
	}
}

func TestNetpolicyRefusesNames(t *testing.T) {
	for _, e := range []string{"pypi.org", "*.pypi.org", "dns:pypi.org", "localhost", "dns:", ""} {
		if got, err := parseAllowed([]string{"203.0.113.80", e}); err == nil {
			t.Errorf("parseAllowed(%q) = %v, want an error: the helper resolves no name (its resolver is the trial's)", e, got)
		} else if !strings.Contains(err.Error(), e) {
			t.Errorf("parseAllowed(%q): %v, want the entry named", e, err)
		}
	}
	// Refused before nftables is opened: the namespace's table is left
	// as it was (and this test writes no table of the host's).
	var out, errb bytes.Buffer
	if code := netPolicy([]string{"allow", "203.0.113.80", "pypi.org"}, &out, &errb); code != 2 {
		t.Errorf("netpolicy allow 203.0.113.80 pypi.org exited %d (%s%s), want 2", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), `"pypi.org" is not an address`) {
		t.Errorf("stderr %q, want the name refused by name", errb.String())
	}
}
