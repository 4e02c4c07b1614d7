package workload

import (
	"container/heap"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// NetShapeMode makes the binary shape the network namespace it runs in:
// a helper container with NET_ADMIN joined to a trial's namespace
// (docker run --network container:TRIAL). It never touches any other
// namespace, so the host's interfaces are left alone.
//
// Bandwidth is the kernel's: a token bucket (tbf) on the interface's
// egress and, for what the trial downloads, on an ifb device its ingress
// is redirected to. Latency, jitter and loss are a delay line: the
// interface's egress is redirected (clsact, u32, mirred) to a tap device
// this process reads, holds each frame for the latency, drops the lost
// ones and writes the rest out of the interface past its qdisc
// (PACKET_QDISC_BYPASS), pacing them to the bandwidth. tc netem does
// the same in the kernel, where the kernel has it; this needs only what
// every kernel with tc has, and measures the same (docs/KNOBS.md).
const NetShapeMode = "netshape"

// NetShapeReady is the line the helper prints once the shaping is in
// place (the trial starts only after it), followed by its NetShapeState
// as JSON; NetShapeStateLine starts the line it prints after each
// SIGHUP, once it has shaped every interface the namespace has then.
const (
	NetShapeReady     = "netshape ready: "
	NetShapeStateLine = "netshape state: "
)

// Names of the devices the helper makes inside the trial's namespace,
// numbered per interface it shapes.
const (
	netShapeTap = "hrdelay"
	netShapeIfb = "hringress"
)

// NetShape is what to apply.
type NetShape struct {
	Dev      string
	Latency  time.Duration
	Jitter   time.Duration
	LossPct  float64
	RateBits int64
}

// delays says whether the delay line is needed.
func (s NetShape) delays() bool { return s.Latency > 0 || s.Jitter > 0 || s.LossPct > 0 }

// NetShapeState is what the helper found and did in the namespace: each
// interface shaped, with what the kernel holds for it and the round trip
// measured through it.
type NetShapeState struct {
	Links []LinkState `json:"links"`
}

// LinkState is one interface's shaping, as read back and measured.
type LinkState struct {
	Name    string `json:"name"`
	Applied string `json:"applied"`
	// Kernel is what the kernel holds on the interface, read back after
	// applying it ("clsact, egress redirect to hrdelay0").
	Kernel string `json:"kernel,omitempty"`
	// RTTms is the median round trip of ICMP echoes to Target through
	// the interface (0 with Why when there was no reply).
	RTTms  float64 `json:"rtt_ms,omitempty"`
	Target string  `json:"target,omitempty"`
	Why    string  `json:"why,omitempty"`
}

func netShape(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(NetShapeMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s NetShape
	fs.StringVar(&s.Dev, "dev", "", "interface to shape (default: every one the namespace has, now and after each SIGHUP)")
	fs.DurationVar(&s.Latency, "latency", 0, "added round-trip time (delayed on egress)")
	fs.DurationVar(&s.Jitter, "jitter", 0, "spread of the added latency (± around it, at most the latency)")
	fs.Float64Var(&s.LossPct, "loss", 0, "percent of outgoing packets dropped")
	fs.Int64Var(&s.RateBits, "rate", 0, "bits a second each way (0: not capped)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if s.RateBits <= 0 && !s.delays() {
		fmt.Fprintln(stderr, "netshape: nothing to apply: give a latency, jitter, loss or rate")
		return 2
	}
	if s.Jitter > s.Latency {
		fmt.Fprintf(stderr, "netshape: jitter %s exceeds the latency %s: a delay cannot go below zero\n", s.Jitter, s.Latency)
		return 2
	}
	sh := &shaper{s: s, links: map[int]*linkShape{}, ours: map[string]bool{}}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	st, err := sh.sync()
	if err != nil {
		fmt.Fprintf(stderr, "netshape: %v\n", err)
		sh.undo()
		return 1
	}
	fmt.Fprintln(stdout, NetShapeReady+st.json())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	for {
		select {
		case <-hup:
			// A network change: shape what is new, drop what is gone.
			st, err := sh.sync()
			if err != nil {
				st.Links = append(st.Links, LinkState{Why: err.Error()})
			}
			fmt.Fprintln(stdout, NetShapeStateLine+st.json())
		case <-ch:
			sh.undo()
			fmt.Fprintf(stdout, "netshape done: %d frames delayed, %d dropped, %d bytes", sh.frames.Load(), sh.dropped.Load(), sh.bytes.Load())
			if n := sh.overflow.Load(); n > 0 {
				fmt.Fprintf(stdout, ", %d dropped at the delay line's bound (%d frames or %s held, as netem's limit drops)", n, MaxHeldFrames, model.FormatBytes(MaxHeldBytes))
			}
			fmt.Fprintln(stdout)
			return 0
		}
	}
}

func (st NetShapeState) json() string {
	b, _ := json.Marshal(st)
	return string(b)
}

// shaper is the shaping in place, per interface, each undone in reverse.
type shaper struct {
	s     NetShape
	links map[int]*linkShape // by interface index
	ours  map[string]bool    // the devices the helper made
	n     int                // devices made so far (their number)

	frames, dropped, bytes atomic.Int64
	// overflow counts the frames dropped at the delay line's bound.
	overflow atomic.Int64
}

// linkShape is one interface's shaping.
type linkShape struct {
	link    netlink.Link
	undos   []func()
	applied []string
}

func (ls *linkShape) undo() {
	for i := len(ls.undos) - 1; i >= 0; i-- {
		ls.undos[i]()
	}
	ls.undos = nil
}

func (sh *shaper) undo() {
	for idx, ls := range sh.links {
		ls.undo()
		delete(sh.links, idx)
	}
}

// targets are the interfaces to shape: the one named, or every one but
// loopback and the helper's own devices.
func (sh *shaper) targets() ([]netlink.Link, error) {
	if sh.s.Dev != "" {
		l, err := netlink.LinkByName(sh.s.Dev)
		if err != nil {
			return nil, fmt.Errorf("interface %s: %w", sh.s.Dev, err)
		}
		return []netlink.Link{l}, nil
	}
	all, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("listing interfaces: %w", err)
	}
	var out []netlink.Link
	for _, l := range all {
		a := l.Attrs()
		// Loopback, the helper's own devices, and what is down (a
		// namespace's idle tunl0 or sit0) carry none of the trial's
		// traffic.
		if a.Flags&net.FlagLoopback != 0 || a.Flags&net.FlagUp == 0 || sh.ours[a.Name] {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// sync shapes every interface the namespace has that is not shaped yet,
// undoes what it did on interfaces now gone (a network disconnected),
// and says what holds, as read back from the kernel and measured.
func (sh *shaper) sync() (NetShapeState, error) {
	links, err := sh.targets()
	if err != nil {
		return NetShapeState{}, err
	}
	now := map[int]bool{}
	for _, l := range links {
		now[l.Attrs().Index] = true
	}
	for idx, ls := range sh.links {
		if !now[idx] {
			ls.undo()
			delete(sh.links, idx)
		}
	}
	var st NetShapeState
	for _, l := range links {
		idx := l.Attrs().Index
		if _, ok := sh.links[idx]; !ok {
			ls := &linkShape{link: l}
			if err := sh.shapeLink(ls); err != nil {
				ls.undo()
				return st, fmt.Errorf("%s: %w", l.Attrs().Name, err)
			}
			sh.links[idx] = ls
		}
	}
	// Measured together: each interface's probes wait out its latency at
	// once.
	st.Links = make([]LinkState, len(links))
	var wg sync.WaitGroup
	for i, l := range links {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.Links[i] = sh.linkState(sh.links[l.Attrs().Index])
		}()
	}
	wg.Wait()
	return st, nil
}

// linkState reads back what the kernel holds on the interface and
// measures the round trip through it.
func (sh *shaper) linkState(ls *linkShape) LinkState {
	name := ls.link.Attrs().Name
	out := LinkState{Name: name, Applied: strings.Join(ls.applied, "; "), Kernel: kernelShaping(ls.link)}
	target, err := echoTarget(ls.link)
	if err != nil {
		out.Why = err.Error()
		return out
	}
	out.Target = target.String()
	rtt, err := echoRTT(ls.link, target, 5, sh.s.Latency+sh.s.Jitter+2*time.Second)
	if err != nil {
		out.Why = err.Error()
		return out
	}
	out.RTTms = float64(rtt) / float64(time.Millisecond)
	return out
}

// kernelShaping is what the kernel holds on the link: its qdiscs and its
// filters' redirects.
func kernelShaping(l netlink.Link) string {
	var parts []string
	qs, _ := netlink.QdiscList(l)
	for _, q := range qs {
		switch q := q.(type) {
		case *netlink.Tbf:
			parts = append(parts, fmt.Sprintf("tbf %dbit", q.Rate*8))
		default:
			if t := q.Type(); t == "clsact" {
				parts = append(parts, t)
			}
		}
	}
	for _, parent := range []uint32{netlink.HANDLE_MIN_EGRESS, netlink.HANDLE_MIN_INGRESS} {
		fs, _ := netlink.FilterList(l, parent)
		for _, f := range fs {
			u, ok := f.(*netlink.U32)
			if !ok {
				continue
			}
			for _, a := range u.Actions {
				if m, ok := a.(*netlink.MirredAction); ok {
					dir := "egress"
					if parent == netlink.HANDLE_MIN_INGRESS {
						dir = "ingress"
					}
					to := strconv.Itoa(m.Ifindex)
					if dev, err := netlink.LinkByIndex(m.Ifindex); err == nil {
						to = dev.Attrs().Name
						// The ifb's own cap, what downloads meet.
						qs, _ := netlink.QdiscList(dev)
						for _, q := range qs {
							if t, ok := q.(*netlink.Tbf); ok {
								to += fmt.Sprintf(" (tbf %dbit)", t.Rate*8)
							}
						}
					}
					parts = append(parts, dir+" redirected to "+to)
				}
			}
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// shapeLink applies the shaping to one interface.
func (sh *shaper) shapeLink(ls *linkShape) error {
	link := ls.link
	idx := link.Attrs().Index
	clsact := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}
	if err := netlink.QdiscAdd(clsact); err != nil {
		return fmt.Errorf("add clsact to %s: %w (does the helper have NET_ADMIN?)", link.Attrs().Name, err)
	}
	ls.undos = append(ls.undos, func() { _ = netlink.QdiscDel(clsact) })
	num := sh.n
	sh.n++
	if sh.s.RateBits > 0 {
		if err := sh.ingressRate(ls, fmt.Sprintf("%s%d", netShapeIfb, num)); err != nil {
			return err
		}
	}
	if sh.s.delays() {
		return sh.delayLine(ls, fmt.Sprintf("%s%d", netShapeTap, num))
	}
	tbf := rateQdisc(idx, sh.s.RateBits)
	if err := netlink.QdiscAdd(tbf); err != nil {
		return fmt.Errorf("add tbf to %s: %w", link.Attrs().Name, err)
	}
	ls.undos = append(ls.undos, func() { _ = netlink.QdiscDel(tbf) })
	ls.applied = append(ls.applied, fmt.Sprintf("tbf rate %dbit on %s egress", sh.s.RateBits, link.Attrs().Name))
	return nil
}

// rateQdisc is a token bucket at rate bits a second: a burst of 10 ms
// of traffic (at least 16 KiB, so one TSO frame fits) and a queue of
// 200 ms more before drops, as `tc qdisc add ... tbf rate R burst B
// latency 200ms` makes.
func rateQdisc(link int, rateBits int64) *netlink.Tbf {
	bytes := uint64(rateBits / 8)
	burst := uint32(max(bytes/100, 16*1024))
	return &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       bytes,
		Buffer:     netlink.Xmittime(bytes, burst),
		Limit:      burst + uint32(bytes/5),
	}
}

// ingressRate redirects what arrives on the link to an ifb device whose
// egress is a token bucket: the only way to shape downloads from inside
// the namespace.
func (sh *shaper) ingressRate(ls *linkShape, name string) error {
	idx := ls.link.Attrs().Index
	ifb := &netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: name, TxQLen: 1000}}
	sh.ours[name] = true
	if err := netlink.LinkAdd(ifb); err != nil {
		return fmt.Errorf("add ifb device: %w (the kernel needs CONFIG_IFB)", err)
	}
	ls.undos = append(ls.undos, func() { _ = netlink.LinkDel(ifb) })
	dev, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(dev); err != nil {
		return err
	}
	if err := netlink.QdiscAdd(rateQdisc(dev.Attrs().Index, sh.s.RateBits)); err != nil {
		return fmt.Errorf("add tbf to %s: %w", name, err)
	}
	redirect := &netlink.U32{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: idx, Parent: netlink.HANDLE_MIN_INGRESS, Priority: 1, Protocol: unix.ETH_P_ALL},
		ClassId:     netlink.MakeHandle(1, 1),
		RedirIndex:  dev.Attrs().Index,
	}
	if err := netlink.FilterAdd(redirect); err != nil {
		return fmt.Errorf("redirect %s ingress to %s: %w (the kernel needs cls_u32 and act_mirred)", ls.link.Attrs().Name, name, err)
	}
	ls.applied = append(ls.applied, fmt.Sprintf("tbf rate %dbit on %s ingress (via %s)", sh.s.RateBits, ls.link.Attrs().Name, name))
	return nil
}

// delayLine redirects the link's egress to a tap device and sends what
// it reads from there out of the link, later.
func (sh *shaper) delayLine(ls *linkShape, name string) error {
	idx := ls.link.Attrs().Index
	sh.ours[name] = true
	tap := &netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: ls.link.Attrs().MTU}, Mode: netlink.TUNTAP_MODE_TAP, Flags: netlink.TUNTAP_NO_PI | netlink.TUNTAP_ONE_QUEUE, Queues: 1}
	if err := netlink.LinkAdd(tap); err != nil {
		return fmt.Errorf("add tap device: %w (the helper needs /dev/net/tun)", err)
	}
	if len(tap.Fds) == 0 {
		_ = netlink.LinkDel(tap)
		return errors.New("add tap device: no file descriptor came back")
	}
	in := tap.Fds[0]
	ls.undos = append(ls.undos, func() { in.Close(); _ = netlink.LinkDel(tap) })
	dev, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(dev); err != nil {
		return err
	}
	out, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		return fmt.Errorf("packet socket: %w (the helper needs NET_RAW)", err)
	}
	if err := unix.SetsockoptInt(out, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
		unix.Close(out)
		return fmt.Errorf("packet socket: qdisc bypass: %w", err)
	}
	ls.undos = append(ls.undos, func() { unix.Close(out) })
	to := &unix.SockaddrLinklayer{Ifindex: idx, Halen: 6}
	redirect := &netlink.U32{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: idx, Parent: netlink.HANDLE_MIN_EGRESS, Priority: 1, Protocol: unix.ETH_P_ALL},
		ClassId:     netlink.MakeHandle(1, 1),
		RedirIndex:  dev.Attrs().Index,
	}
	q := &delayQueue{wake: make(chan struct{}, 1)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.send(stop, func(frame []byte) {
			copy(to.Addr[:], frame[:6])
			if err := unix.Sendto(out, frame, 0, to); err == nil {
				sh.bytes.Add(int64(len(frame)))
			}
		})
	}()
	go sh.readFrames(in, q)
	if err := netlink.FilterAdd(redirect); err != nil {
		close(stop)
		wg.Wait()
		return fmt.Errorf("redirect %s egress to %s: %w (the kernel needs cls_u32 and act_mirred)", ls.link.Attrs().Name, name, err)
	}
	// The filter goes first (frames stop being redirected), then the
	// frames held are sent, then the devices go.
	ls.undos = append(ls.undos, func() {
		_ = netlink.FilterDel(redirect)
		close(stop)
		wg.Wait()
	})
	desc := fmt.Sprintf("delay line on %s egress: latency %s", ls.link.Attrs().Name, sh.s.Latency)
	if sh.s.Jitter > 0 {
		desc += fmt.Sprintf(" ± %s", sh.s.Jitter)
	}
	if sh.s.LossPct > 0 {
		desc += fmt.Sprintf(", loss %g%%", sh.s.LossPct)
	}
	if sh.s.RateBits > 0 {
		desc += fmt.Sprintf(", paced to %dbit", sh.s.RateBits)
	}
	ls.applied = append(ls.applied, desc)
	return nil
}

// readFrames reads frames from the tap and queues each for its
// departure: the delay of the moment it arrived (jitterCurve), and, with
// a rate, no sooner than the link has sent the one ahead at that rate.
func (sh *shaper) readFrames(in *os.File, q *delayQueue) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 28))
	curve := newJitterCurve(sh.s.Latency, sh.s.Jitter, time.Now(), rng)
	buf := make([]byte, 65536)
	var last time.Time
	for {
		n, err := in.Read(buf)
		if err != nil {
			return
		}
		now := time.Now()
		if sh.s.LossPct > 0 && rng.Float64()*100 < sh.s.LossPct {
			sh.dropped.Add(1)
			continue
		}
		at := now.Add(curve.at(now))
		if sh.s.RateBits > 0 {
			// The frame leaves when the one ahead has been sent.
			at = maxTime(at, last).Add(time.Duration(float64(n*8) / float64(sh.s.RateBits) * float64(time.Second)))
		}
		if !q.push(at, append([]byte(nil), buf[:n]...)) {
			// The line is full: dropped at its tail, as a queue drops,
			// and as netem drops past its limit. Unbounded, a task's own
			// flood at a second's latency held every frame until the
			// helper (128 MiB) was OOM-killed, and the trial's network
			// stayed redirected to a device no one read (the
			// twenty-third attacker's 1).
			sh.overflow.Add(1)
			continue
		}
		last = at
		sh.frames.Add(1)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// jitterCurve is the delay line's delay over time: the latency plus a
// spread that moves along straight lines between points drawn uniformly
// from ±jitter, one every 4×jitter. It stays within latency ± jitter,
// symmetric about the latency (its mean and median), and never falls
// faster than time passes (slope at most ½), so a frame never departs
// before the one ahead of it: frames keep their order without being held
// back, which would push the delays up (a per-frame draw with order kept
// did: +20–30 ms at ±50 ms under load).
type jitterCurve struct {
	latency, jitter, period time.Duration
	start                   time.Time
	rng                     *rand.Rand
	n                       int64   // the period k0 starts
	k0, k1                  float64 // its ends, in units of jitter
}

func newJitterCurve(latency, jitter time.Duration, start time.Time, rng *rand.Rand) *jitterCurve {
	c := &jitterCurve{latency: latency, jitter: jitter, period: 4 * jitter, start: start, rng: rng}
	if jitter > 0 {
		c.k0, c.k1 = c.draw(), c.draw()
	}
	return c
}

func (c *jitterCurve) draw() float64 { return c.rng.Float64()*2 - 1 }

// at is the delay of a frame arriving at t (t never earlier than the
// last asked).
func (c *jitterCurve) at(t time.Time) time.Duration {
	if c.jitter <= 0 {
		return c.latency
	}
	since := t.Sub(c.start)
	i := int64(since / c.period)
	if i > c.n+2 {
		// A long quiet spell: no frame is in flight across it, so the
		// curve starts afresh.
		c.n, c.k1 = i-1, c.draw()
	}
	for c.n < i {
		c.n, c.k0, c.k1 = c.n+1, c.k1, c.draw()
	}
	u := float64(since-time.Duration(i)*c.period) / float64(c.period)
	return c.latency + time.Duration(((1-u)*c.k0+u*c.k1)*float64(c.jitter))
}

// echoTarget is the address an interface's round trip is measured to:
// its gateway, else the first host of its subnet (the bridge's address
// on an internal network).
func echoTarget(l netlink.Link) (net.IP, error) {
	routes, err := netlink.RouteList(l, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("reading %s's routes: %w", l.Attrs().Name, err)
	}
	for _, r := range routes {
		if r.Gw != nil {
			return r.Gw, nil
		}
	}
	addrs, err := netlink.AddrList(l, netlink.FAMILY_V4)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("%s has no IPv4 address to measure a round trip from", l.Attrs().Name)
	}
	ip := addrs[0].IP.Mask(addrs[0].Mask).To4()
	first := net.IPv4(ip[0], ip[1], ip[2], ip[3]+1)
	return first, nil
}

// echoRTT sends n ICMP echoes to target out of the link, 20 ms apart,
// after one whose reply it waits for (the neighbour's address resolved,
// which the delay line delays too), and returns the median round trip of
// the replies within wait.
func echoRTT(l netlink.Link, target net.IP, n int, wait time.Duration) (time.Duration, error) {
	c, err := net.ListenPacket("ip4:icmp", "0.0.0.0")
	if err != nil {
		return 0, fmt.Errorf("icmp socket: %w (the helper needs NET_RAW)", err)
	}
	defer c.Close()
	if raw, ok := c.(*net.IPConn); ok {
		if sc, err := raw.SyscallConn(); err == nil {
			_ = sc.Control(func(fd uintptr) { _ = unix.BindToDevice(int(fd), l.Attrs().Name) })
		}
	}
	id := uint16(os.Getpid()) ^ uint16(l.Attrs().Index)
	if _, err := echoRound(c, target, id, 0, 1, wait); err != nil {
		return 0, err
	}
	rtts, err := echoRound(c, target, id, 1, n, wait)
	if err != nil {
		return 0, err
	}
	return MedianDuration(rtts), nil
}

// echoRound sends n echoes numbered from first, 20 ms apart, and reads
// their replies until all came or wait has passed since the last went.
func echoRound(c net.PacketConn, target net.IP, id uint16, first, n int, wait time.Duration) ([]time.Duration, error) {
	var mu sync.Mutex
	sent := map[int]time.Time{}
	go func() {
		for i := range n {
			mu.Lock()
			sent[first+i] = time.Now()
			mu.Unlock()
			_, _ = c.WriteTo(echoRequest(id, uint16(first+i)), &net.IPAddr{IP: target})
			if i < n-1 {
				time.Sleep(20 * time.Millisecond) // spacing the probes, not waiting on one
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(wait + time.Duration(n)*20*time.Millisecond))
	var rtts []time.Duration
	buf := make([]byte, 1500)
	for len(rtts) < n {
		k, from, err := c.ReadFrom(buf)
		if err != nil {
			break
		}
		now := time.Now()
		if a, ok := from.(*net.IPAddr); !ok || !a.IP.Equal(target) || k < 8 || buf[0] != 0 {
			continue
		}
		if uint16(buf[4])<<8|uint16(buf[5]) != id {
			continue
		}
		seq := int(uint16(buf[6])<<8 | uint16(buf[7]))
		mu.Lock()
		if at, ok := sent[seq]; ok {
			rtts = append(rtts, now.Sub(at))
			delete(sent, seq)
		}
		mu.Unlock()
	}
	if len(rtts) == 0 {
		return nil, fmt.Errorf("no echo reply from %s within %s: round trip not measured", target, wait)
	}
	return rtts, nil
}

// echoRequest is an ICMP echo request.
func echoRequest(id, seq uint16) []byte {
	b := []byte{8, 0, 0, 0, byte(id >> 8), byte(id), byte(seq >> 8), byte(seq), 'h', 'r'}
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	cs := ^uint16(sum)
	b[2], b[3] = byte(cs>>8), byte(cs)
	return b
}

// The delay line's bound: what it holds at once, in frames and in
// bytes. netem's own limit is 1,000 packets; this one is wider, so that
// the line caps no transfer a real link of its latency would carry
// (32 MiB in flight is 268 Mbit/s at a second's delay), and narrow
// enough that the helper, under its 128 MiB, holds it with the garbage
// its copies leave (twice the live heap, at GOGC's 100).
const (
	MaxHeldFrames = 1 << 16
	MaxHeldBytes  = 32 << 20
)

// delayQueue holds frames until their departure.
type delayQueue struct {
	mu    sync.Mutex
	h     frameHeap
	bytes int
	wake  chan struct{}
}

type heldFrame struct {
	at    time.Time
	seq   int64
	frame []byte
}

type frameHeap []heldFrame

func (h frameHeap) Len() int { return len(h) }
func (h frameHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h frameHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *frameHeap) Push(x any)   { *h = append(*h, x.(heldFrame)) }
func (h *frameHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

var frameSeq atomic.Int64

// push holds frame until at, unless the line is full (MaxHeldFrames,
// MaxHeldBytes): then it says false and holds nothing.
func (q *delayQueue) push(at time.Time, frame []byte) bool {
	q.mu.Lock()
	if q.h.Len() >= MaxHeldFrames || q.bytes+len(frame) > MaxHeldBytes {
		q.mu.Unlock()
		return false
	}
	heap.Push(&q.h, heldFrame{at: at, seq: frameSeq.Add(1), frame: frame})
	q.bytes += len(frame)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// pop takes the frame due first; with q.mu held.
func (q *delayQueue) pop() heldFrame {
	f := heap.Pop(&q.h).(heldFrame)
	q.bytes -= len(f.frame)
	return f
}

// send sends each frame at its time until stop, then what is left.
func (q *delayQueue) send(stop <-chan struct{}, out func([]byte)) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.mu.Lock()
		var next time.Time
		for q.h.Len() > 0 {
			f := q.h[0]
			if wait := time.Until(f.at); wait > 0 {
				next = f.at
				break
			}
			q.pop()
			q.mu.Unlock()
			out(f.frame)
			q.mu.Lock()
		}
		q.mu.Unlock()
		wait := time.Hour
		if !next.IsZero() {
			wait = time.Until(next)
		}
		timer.Reset(wait)
		select {
		case <-stop:
			q.mu.Lock()
			for q.h.Len() > 0 {
				out(q.pop().frame)
			}
			q.mu.Unlock()
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}
