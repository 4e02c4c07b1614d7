package workload

import (
	"container/heap"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
// place; the trial starts only after it.
const NetShapeReady = "netshape ready: "

// Names of the devices the helper makes inside the trial's namespace.
const (
	netShapeTap = "hrdelay0"
	netShapeIfb = "hringress0"
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

func netShape(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(NetShapeMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s NetShape
	fs.StringVar(&s.Dev, "dev", "", "interface to shape (default: the default route's)")
	fs.DurationVar(&s.Latency, "latency", 0, "added round-trip time (delayed on egress)")
	fs.DurationVar(&s.Jitter, "jitter", 0, "spread of the added latency (uniform, ±)")
	fs.Float64Var(&s.LossPct, "loss", 0, "percent of outgoing packets dropped")
	fs.Int64Var(&s.RateBits, "rate", 0, "bits a second each way (0: not capped)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sh, err := applyNetShape(s)
	if err != nil {
		fmt.Fprintf(stderr, "netshape: %v\n", err)
		sh.undo()
		return 1
	}
	fmt.Fprintln(stdout, NetShapeReady+sh.describe())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
	sh.undo()
	fmt.Fprintf(stdout, "netshape done: %d frames delayed, %d dropped, %d bytes\n", sh.frames.Load(), sh.dropped.Load(), sh.bytes.Load())
	return 0
}

// shaper is the shaping in place, undone in reverse.
type shaper struct {
	s       NetShape
	link    netlink.Link
	undos   []func()
	applied []string

	frames, dropped, bytes atomic.Int64
}

func (sh *shaper) undo() {
	for i := len(sh.undos) - 1; i >= 0; i-- {
		sh.undos[i]()
	}
	sh.undos = nil
}

func (sh *shaper) describe() string { return strings.Join(sh.applied, "; ") }

// defaultLink is the interface the default route leaves by (a trial's
// container has one, eth0).
func defaultLink(name string) (netlink.Link, error) {
	if name != "" {
		return netlink.LinkByName(name)
	}
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("reading routes: %w", err)
	}
	for _, r := range routes {
		if r.Dst == nil || r.Dst.IP.Equal(net.IPv4zero) {
			return netlink.LinkByIndex(r.LinkIndex)
		}
	}
	// An internal network has no default route: its one interface.
	for _, r := range routes {
		if l, err := netlink.LinkByIndex(r.LinkIndex); err == nil && l.Attrs().Name != "lo" {
			return l, nil
		}
	}
	return nil, errors.New("the namespace has no interface but loopback: nothing to shape (a no-network trial?)")
}

func applyNetShape(s NetShape) (*shaper, error) {
	sh := &shaper{s: s}
	link, err := defaultLink(s.Dev)
	if err != nil {
		return sh, err
	}
	sh.link = link
	idx := link.Attrs().Index
	if s.RateBits <= 0 && !s.delays() {
		return sh, errors.New("nothing to apply: give a latency, jitter, loss or rate")
	}
	clsact := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}
	if err := netlink.QdiscAdd(clsact); err != nil {
		return sh, fmt.Errorf("add clsact to %s: %w (does the helper have NET_ADMIN?)", link.Attrs().Name, err)
	}
	sh.undos = append(sh.undos, func() { _ = netlink.QdiscDel(clsact) })
	if s.RateBits > 0 {
		if err := sh.ingressRate(idx); err != nil {
			return sh, err
		}
	}
	if s.delays() {
		if err := sh.delayLine(idx); err != nil {
			return sh, err
		}
		return sh, nil
	}
	tbf := rateQdisc(idx, s.RateBits)
	if err := netlink.QdiscAdd(tbf); err != nil {
		return sh, fmt.Errorf("add tbf to %s: %w", link.Attrs().Name, err)
	}
	sh.undos = append(sh.undos, func() { _ = netlink.QdiscDel(tbf) })
	sh.applied = append(sh.applied, fmt.Sprintf("tbf rate %dbit on %s egress", s.RateBits, link.Attrs().Name))
	return sh, nil
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
func (sh *shaper) ingressRate(idx int) error {
	ifb := &netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: netShapeIfb, TxQLen: 1000}}
	if err := netlink.LinkAdd(ifb); err != nil {
		return fmt.Errorf("add ifb device: %w (the kernel needs CONFIG_IFB)", err)
	}
	sh.undos = append(sh.undos, func() { _ = netlink.LinkDel(ifb) })
	dev, err := netlink.LinkByName(netShapeIfb)
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(dev); err != nil {
		return err
	}
	if err := netlink.QdiscAdd(rateQdisc(dev.Attrs().Index, sh.s.RateBits)); err != nil {
		return fmt.Errorf("add tbf to %s: %w", netShapeIfb, err)
	}
	redirect := &netlink.U32{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: idx, Parent: netlink.HANDLE_MIN_INGRESS, Priority: 1, Protocol: unix.ETH_P_ALL},
		ClassId:     netlink.MakeHandle(1, 1),
		RedirIndex:  dev.Attrs().Index,
	}
	if err := netlink.FilterAdd(redirect); err != nil {
		return fmt.Errorf("redirect %s ingress to %s: %w (the kernel needs cls_u32 and act_mirred)", sh.link.Attrs().Name, netShapeIfb, err)
	}
	sh.applied = append(sh.applied, fmt.Sprintf("tbf rate %dbit on ingress (via %s)", sh.s.RateBits, netShapeIfb))
	return nil
}

// delayLine redirects the link's egress to a tap device and sends what
// it reads from there out of the link, later.
func (sh *shaper) delayLine(idx int) error {
	tap := &netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: netShapeTap, MTU: sh.link.Attrs().MTU}, Mode: netlink.TUNTAP_MODE_TAP, Flags: netlink.TUNTAP_NO_PI | netlink.TUNTAP_ONE_QUEUE, Queues: 1}
	if err := netlink.LinkAdd(tap); err != nil {
		return fmt.Errorf("add tap device: %w (the helper needs /dev/net/tun)", err)
	}
	if len(tap.Fds) == 0 {
		_ = netlink.LinkDel(tap)
		return errors.New("add tap device: no file descriptor came back")
	}
	in := tap.Fds[0]
	sh.undos = append(sh.undos, func() { in.Close(); _ = netlink.LinkDel(tap) })
	dev, err := netlink.LinkByName(netShapeTap)
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
	sh.undos = append(sh.undos, func() { unix.Close(out) })
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
		return fmt.Errorf("redirect %s egress to %s: %w (the kernel needs cls_u32 and act_mirred)", sh.link.Attrs().Name, netShapeTap, err)
	}
	// The filter goes first (frames stop being redirected), then the
	// frames held are sent, then the devices go.
	sh.undos = append(sh.undos, func() {
		_ = netlink.FilterDel(redirect)
		close(stop)
		wg.Wait()
	})
	desc := fmt.Sprintf("delay line on %s egress: latency %s", sh.link.Attrs().Name, sh.s.Latency)
	if sh.s.Jitter > 0 {
		desc += fmt.Sprintf(" ± %s", sh.s.Jitter)
	}
	if sh.s.LossPct > 0 {
		desc += fmt.Sprintf(", loss %g%%", sh.s.LossPct)
	}
	if sh.s.RateBits > 0 {
		desc += fmt.Sprintf(", paced to %dbit", sh.s.RateBits)
	}
	sh.applied = append(sh.applied, desc)
	return nil
}

// readFrames reads frames from the tap and queues each for its
// departure: the latency (± jitter) after it arrived, never before the
// one ahead of it (frames keep their order), and, with a rate, no sooner
// than the link has sent the one ahead at that rate.
func (sh *shaper) readFrames(in *os.File, q *delayQueue) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 28))
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
		at := now.Add(sh.s.Latency)
		if sh.s.Jitter > 0 {
			at = at.Add(time.Duration((rng.Float64()*2 - 1) * float64(sh.s.Jitter)))
		}
		if at.Before(last) {
			at = last
		}
		if sh.s.RateBits > 0 {
			// The frame leaves when the one ahead has been sent.
			at = at.Add(time.Duration(float64(n*8) / float64(sh.s.RateBits) * float64(time.Second)))
		}
		last = at
		sh.frames.Add(1)
		q.push(at, append([]byte(nil), buf[:n]...))
	}
}

// delayQueue holds frames until their departure.
type delayQueue struct {
	mu   sync.Mutex
	h    frameHeap
	wake chan struct{}
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

func (q *delayQueue) push(at time.Time, frame []byte) {
	q.mu.Lock()
	heap.Push(&q.h, heldFrame{at: at, seq: frameSeq.Add(1), frame: frame})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
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
			heap.Pop(&q.h)
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
				out(heap.Pop(&q.h).(heldFrame).frame)
			}
			q.mu.Unlock()
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}
