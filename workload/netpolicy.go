package workload

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// NetPolicyMode is the argument that makes the binary set a trial's egress
// policy: run in a helper container that joins the trial's network
// namespace with NET_ADMIN (and nothing else), as Harbor's egress sidecar
// does, it writes the namespace's own nftables table and exits; the
// host's firewall is never touched.
//
//	netpolicy allow HOST...   only HOST (names, addresses, CIDR ranges) is reachable
//	netpolicy allow-all       the table is removed: the network is open again
const NetPolicyMode = "netpolicy"

// egressTable is headroom's table in a trial's network namespace.
const egressTable = "headroom_egress"

func netPolicy(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: hr-workload netpolicy allow HOST... | allow-all")
		return 2
	}
	c, err := nftables.New()
	if err != nil {
		fmt.Fprintf(stderr, "netpolicy: nftables: %v\n", err)
		return 1
	}
	table := &nftables.Table{Family: nftables.TableFamilyINet, Name: egressTable}
	// Whatever was there goes, in the same batch as what replaces it.
	c.AddTable(table)
	c.DelTable(table)
	switch args[0] {
	case "allow-all":
		if err := c.Flush(); err != nil {
			fmt.Fprintf(stderr, "netpolicy: removing the egress table: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, "netpolicy: every host reachable")
		return 0
	case "allow":
	default:
		fmt.Fprintf(stderr, "netpolicy: unknown action %q: use allow HOST... or allow-all\n", args[0])
		return 2
	}
	nets, notes := resolveAllowed(args[1:])
	for _, n := range notes {
		fmt.Fprintln(stdout, "netpolicy: "+n)
	}
	c.AddTable(table)
	accept := nftables.ChainPolicyAccept
	chain := c.AddChain(&nftables.Chain{Name: "output", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter, Policy: &accept})
	add := func(exprs ...expr.Any) { c.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: exprs}) }
	acceptV := &expr.Verdict{Kind: expr.VerdictAccept}
	// Loopback, and replies to what was let in or out.
	add(&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname("lo")}, acceptV)
	state := binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED)
	add(&expr.Ct{Key: expr.CtKeySTATE, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: state, Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: make([]byte, 4)}, acceptV)
	for _, n := range nets {
		proto, off := byte(unix.NFPROTO_IPV4), uint32(16)
		ip := n.IP.To4()
		if ip == nil {
			proto, off, ip = unix.NFPROTO_IPV6, 24, n.IP.To16()
		}
		mask := []byte(n.Mask)
		if len(mask) != len(ip) {
			mask = []byte(net.CIDRMask(len(ip)*8, len(ip)*8))
		}
		add(&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: uint32(len(ip))},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: uint32(len(ip)), Mask: mask, Xor: make([]byte, len(ip))},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte(ip.Mask(net.IPMask(mask)))}, acceptV)
	}
	// Everything else is refused at once (not dropped: a refused connect
	// fails in milliseconds, as the agent should see it).
	add(&expr.Reject{Type: unix.NFT_REJECT_ICMPX_UNREACH, Code: unix.NFT_REJECT_ICMPX_ADMIN_PROHIBITED})
	if err := c.Flush(); err != nil {
		fmt.Fprintf(stderr, "netpolicy: writing the egress table: %v (the kernel needs nf_tables)\n", err)
		return 1
	}
	var shown []string
	for _, n := range nets {
		shown = append(shown, n.String())
	}
	fmt.Fprintf(stdout, "netpolicy: only %s reachable\n", strings.Join(shown, ", "))
	return 0
}

// resolveAllowed turns allowlist entries into networks: addresses and
// CIDR ranges as written, names by the namespace's own resolver (the
// trial container's /etc/resolv.conf, which the helper shares), whose
// name servers are then allowed too so the names keep resolving.
// Wildcards name no address and are noted.
func resolveAllowed(hosts []string) ([]*net.IPNet, []string) {
	var out []*net.IPNet
	var notes []string
	named := false
	r := &net.Resolver{PreferGo: true}
	for _, h := range hosts {
		if _, n, err := net.ParseCIDR(h); err == nil {
			out = append(out, n)
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			out = append(out, single(ip))
			continue
		}
		if strings.HasPrefix(h, "*.") {
			notes = append(notes, h+": a wildcard names no address; not reachable")
			continue
		}
		named = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		addrs, err := r.LookupIPAddr(ctx, h)
		cancel()
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v; not reachable", h, err))
			continue
		}
		var shown []string
		for _, a := range addrs {
			out = append(out, single(a.IP))
			shown = append(shown, a.IP.String())
		}
		notes = append(notes, h+" is "+strings.Join(shown, ", "))
	}
	if named {
		for _, ns := range nameServers("/etc/resolv.conf") {
			out = append(out, single(ns))
		}
	}
	return out, notes
}

func single(ip net.IP) *net.IPNet {
	if v4 := ip.To4(); v4 != nil {
		return &net.IPNet{IP: v4, Mask: net.CIDRMask(32, 32)}
	}
	return &net.IPNet{IP: ip.To16(), Mask: net.CIDRMask(128, 128)}
}

// nameServers reads a resolv.conf's nameserver lines.
func nameServers(file string) []net.IP {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []net.IP
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			if ip := net.ParseIP(fields[1]); ip != nil {
				out = append(out, ip)
			}
		}
	}
	return out
}

// ifname is an interface name as nftables compares it: 16 bytes, padded.
func ifname(n string) []byte {
	b := make([]byte, 16)
	copy(b, n)
	return b
}
