package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload/wire"
)

// knobWork is the part of a step that a knob acts on: model round trips,
// a download, direct writes. Each reports what it measured in here.
func knobWork(p wire.Profile, stdout, stderr io.Writer) int {
	if p.ModelCalls > 0 {
		var rtts []time.Duration
		cl := &http.Client{Timeout: time.Minute}
		for turn := 0; turn < p.ModelCalls; turn++ {
			body, _ := json.Marshal(map[string]int{"turn": turn, "turns": p.ModelCalls})
			start := time.Now()
			resp, err := cl.Post(p.ModelURL, "application/json", bytes.NewReader(body))
			if err != nil {
				fmt.Fprintf(stderr, "error: the model API did not answer turn %d: %v\n", turn+1, err)
				return 1
			}
			var reply struct {
				Content []struct {
					Input string `json:"input"`
					Text  string `json:"text"`
				} `json:"content"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&reply)
			resp.Body.Close()
			rtts = append(rtts, time.Since(start))
			if len(reply.Content) > 0 {
				fmt.Fprintf(stdout, "turn %d: %s%s\n", turn+1, reply.Content[0].Input, reply.Content[0].Text)
			}
			if turn%5 == 4 || turn == p.ModelCalls-1 {
				// Reported as it goes: a timed-out agent still says how slow.
				fmt.Fprintln(stdout, model.FormatMeasure("model_rtt", float64(MedianDuration(rtts))/float64(time.Millisecond), "ms"))
			}
		}
	}
	if p.FetchURL != "" {
		name := p.FetchURL
		if len(p.Packages) > 0 {
			name = strings.Join(p.Packages, " ")
		}
		fmt.Fprintf(stdout, "Downloading %s\n", name)
		n, took, err := fetchReporting(p.FetchURL, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "error: download failed: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Downloaded %s in %.1fs\n", model.FormatBytes(n), took.Seconds())
	}
	if p.DirectWrites > 0 {
		dir := p.WriteDir
		if dir == "" {
			dir = filepath.Join(filepath.Dir(markerDir), "build")
		}
		kb := max(p.WriteKB, 4)
		// In slices, so a build stalled at its limit still reports.
		done := 0
		for done < p.DirectWrites {
			n := min(p.DirectWrites-done, 50)
			r, err := DirectWrites(dir, n, kb, 0)
			if err != nil {
				fmt.Fprintf(stderr, "error: %v\n", err)
				return 1
			}
			done += n
			fmt.Fprintf(stdout, "[%d/%d] wrote object files\n", done, p.DirectWrites)
			fmt.Fprintln(stdout, model.FormatMeasure("write_iops", r.IOPS(), "op/s"))
		}
	}
	return 0
}

// fetchReporting downloads url, reporting the rate every 256 KiB.
func fetchReporting(url string, stdout io.Writer) (int64, time.Duration, error) {
	cl := &http.Client{Timeout: time.Hour}
	start := time.Now()
	resp, err := cl.Get(url)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, errors.New(resp.Status)
	}
	var n int64
	next := int64(256 << 10)
	buf := make([]byte, 32<<10)
	for {
		k, err := resp.Body.Read(buf)
		n += int64(k)
		if n >= next || (err != nil && n > 0) {
			next += 256 << 10
			fmt.Fprintln(stdout, model.FormatMeasure("transfer_rate", float64(n*8)/time.Since(start).Seconds(), "bit/s"))
		}
		if err == io.EOF {
			return n, time.Since(start), nil
		}
		if err != nil {
			return n, time.Since(start), err
		}
	}
}

// runDelay is how long this process's threads have waited on a run
// queue, from /proc/self/task/*/schedstat (-1 when unreadable).
func runDelay() time.Duration {
	dirs, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	var total time.Duration
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", d.Name(), "schedstat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err == nil {
			total += time.Duration(v)
		}
	}
	return total
}
