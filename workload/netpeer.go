package workload

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload/wire"
)

// Ports the server listens on.
const (
	ServePort = 8080
	EchoPort  = 7007
)

// Probe modes, run inside a trial's container to measure a knob's effect
// there (the real-engine tests and the knobs' built-in tasks).
const (
	RTTMode      = "rtt"      // rtt [--n N] [--spread] HOST:PORT: median TCP echo round trip (and its spread)
	FetchMode    = "fetch"    // fetch URL: transfer rate of one GET
	UploadMode   = "upload"   // upload [--bytes N] URL: transfer rate of one POST
	DirectIOMode = "directio" // directio [--ops N --kb K] DIR: O_DIRECT write rate
	FloodMode    = "flood"    // flood [--for D] HOST:PORT: UDP datagrams of 1400 bytes as fast as it can send them
)

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(wire.ServeMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", ServePort, "HTTP port")
	echo := fs.Int("echo-port", EchoPort, "TCP echo port")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	el, err := net.Listen("tcp", fmt.Sprintf(":%d", *echo))
	if err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	}
	go echoLoop(el)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/messages", modelReply)
	mux.HandleFunc("/blob", blob)
	mux.HandleFunc("/sink", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d\n", n)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	hl, err := net.Listen("tcp", fmt.Sprintf(":%d", *port))
	if err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "serving: model stand-in and mirror on :%d, echo on :%d\n", *port, *echo)
	go func() { _ = http.Serve(hl, mux) }()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
	return 0
}

func echoLoop(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_, _ = io.Copy(c, c)
		}()
	}
}

// modelReply is a scripted model turn: the request says which turn it
// is, the reply names the next tool call (the last turn ends the task).
func modelReply(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Turn  int `json:"turn"`
		Turns int `json:"turns"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	reply := map[string]any{"role": "assistant", "turn": req.Turn, "stop_reason": "tool_use",
		"content": []map[string]string{{"type": "tool_use", "name": "bash", "input": fmt.Sprintf("sed -n %d,%dp src/app.py", 10*req.Turn+1, 10*req.Turn+10)}}}
	if req.Turn+1 >= req.Turns {
		reply["stop_reason"] = "end_turn"
		reply["content"] = []map[string]string{{"type": "text", "text": "The fix is applied and the tests pass."}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

// blob streams ?bytes=N bytes (a package from the mirror).
func blob(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
	if err != nil || n < 0 || n > 1<<34 {
		http.Error(w, "bytes must be a count up to 16 GiB", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i)
	}
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := w.Write(buf[:k]); err != nil {
			return
		}
		n -= k
	}
}

// ProbeRTT measures n TCP echo round trips to addr and returns them.
func ProbeRTT(addr string, n int, timeout time.Duration) ([]time.Duration, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	rd := bufio.NewReader(c)
	var out []time.Duration
	for i := 0; i < n; i++ {
		_ = c.SetDeadline(time.Now().Add(timeout))
		start := time.Now()
		if _, err := fmt.Fprintf(c, "ping %d\n", i); err != nil {
			return out, err
		}
		if _, err := rd.ReadString('\n'); err != nil {
			return out, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// MedianDuration is the median of ds (0 for none).
func MedianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func rttProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(RTTMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 20, "round trips")
	spread := fs.Bool("spread", false, "also print the 10th and 90th percentiles")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 || *n < 1 {
		fmt.Fprintln(stderr, "usage: rtt [--n N] [--spread] HOST:PORT")
		return 2
	}
	rtts, err := ProbeRTT(fs.Arg(0), *n, 30*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "rtt: %v\n", err)
		return 1
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	fmt.Fprintln(stdout, model.FormatMeasure("rtt", ms(MedianDuration(rtts)), "ms"))
	if *spread {
		// The spread a jitter gives: the 10th and 90th percentiles.
		s := append([]time.Duration(nil), rtts...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		fmt.Fprintln(stdout, model.FormatMeasure("rtt_p10", ms(s[len(s)/10]), "ms"))
		fmt.Fprintln(stdout, model.FormatMeasure("rtt_p90", ms(s[len(s)*9/10]), "ms"))
	}
	return 0
}

// floodProbe sends UDP datagrams of 1400 bytes to one address as fast as
// it can for a while: a task's own traffic at a rate no delay line may
// hold whole (the twenty-third attacker's 1).
func floodProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(FloodMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := fs.Duration("for", 5*time.Second, "how long")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: flood [--for D] HOST:PORT")
		return 2
	}
	c, err := net.Dial("udp", fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "flood: %v\n", err)
		return 1
	}
	defer c.Close()
	buf := make([]byte, 1400)
	var sent int64
	for end := time.Now().Add(*d); time.Now().Before(end); {
		if n, err := c.Write(buf); err == nil {
			sent += int64(n)
		}
	}
	fmt.Fprintln(stdout, model.FormatMeasure("flood_sent", float64(sent), "B"))
	return 0
}

// Fetch GETs url to the end and returns the bytes and how long it took.
func Fetch(url string, timeout time.Duration) (int64, time.Duration, error) {
	cl := &http.Client{Timeout: timeout}
	start := time.Now()
	resp, err := cl.Get(url)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	return n, time.Since(start), err
}

func fetchProbe(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: fetch URL")
		return 2
	}
	n, took, err := Fetch(args[0], 10*time.Minute)
	if err != nil {
		fmt.Fprintf(stderr, "fetch: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, model.FormatMeasure("transfer_rate", float64(n*8)/took.Seconds(), "bit/s"))
	return 0
}

// uploadProbe POSTs n bytes to url (the server's /sink) and prints the
// rate they went at: what the trial's egress, where the delay line acts,
// carries.
func uploadProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(UploadMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int64("bytes", 8<<20, "bytes to send")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 || *n < 1 {
		fmt.Fprintln(stderr, "usage: upload [--bytes N] URL")
		return 2
	}
	cl := &http.Client{Timeout: 10 * time.Minute}
	start := time.Now()
	resp, err := cl.Post(fs.Arg(0), "application/octet-stream", io.LimitReader(zeros{}, *n))
	if err != nil {
		fmt.Fprintf(stderr, "upload: %v\n", err)
		return 1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "upload: %s\n", resp.Status)
		return 1
	}
	fmt.Fprintln(stdout, model.FormatMeasure("upload_rate", float64(*n*8)/took.Seconds(), "bit/s"))
	return 0
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func directIOProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(DirectIOMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	ops := fs.Int("ops", 200, "writes")
	kb := fs.Int("kb", 4, "KiB a write (a multiple of 4)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: directio [--ops N --kb K] DIR")
		return 2
	}
	r, err := DirectWrites(fs.Arg(0), *ops, *kb, 0)
	if err != nil {
		fmt.Fprintf(stderr, "directio: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, model.FormatMeasure("write_iops", r.IOPS(), "op/s"))
	fmt.Fprintln(stdout, model.FormatMeasure("write_rate", r.BytesPerSec(), "B/s"))
	return 0
}

// IORun is what a run of direct writes did.
type IORun struct {
	Ops   int
	Bytes int64
	Took  time.Duration
}

// IOPS is the writes a second.
func (r IORun) IOPS() float64 { return float64(r.Ops) / r.Took.Seconds() }

// BytesPerSec is the bytes written a second.
func (r IORun) BytesPerSec() float64 { return float64(r.Bytes) / r.Took.Seconds() }

// ErrIODeadline is returned when direct writes ran past their deadline.
var ErrIODeadline = errors.New("the writes ran past their deadline")
