package kube

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/workload"
)

// A step's output line may make its taker ask the probe something: the
// runner reads a traced command's kernel peak as the command's trace line
// comes. The answer comes on the same stream as the line, so a line
// handed on by the stream's reader held the answer until the ask gave up
// (5 s a line): a Harbor task's traced verifier, run by the probe, ran
// past its minute on the local cluster. Lines are handed on beside the
// reader now, in order, all of them before the step's ask returns.
func TestProbeLineMayAskTheProbe(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	defer outW.Close()
	// The probe: a step says three lines and ends; a peak is answered.
	go func() {
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			var c workload.Command
			if json.Unmarshal(sc.Bytes(), &c) != nil {
				return
			}
			send := func(l workload.ProbeLine) { fmt.Fprintln(outW, l.String()) }
			switch c.Op {
			case workload.OpPeak:
				send(workload.ProbeLine{Kind: workload.ProbePeak, ID: c.End, Peak: 7, Known: true})
			case "":
				for i := range 3 {
					send(workload.ProbeLine{Kind: workload.ProbeOut, ID: c.End, Text: fmt.Sprintf("line %d", i)})
				}
				send(workload.ProbeLine{Kind: workload.ProbeExit, ID: c.End, Code: 0})
			}
		}
	}()
	c := newProbeConn(inW)
	go c.read(outR)
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := c.run(context.Background(), []string{"x"}, nil, "", false, func(_, text string) {
			l, err := c.quick(workload.OpPeak, 2*time.Second)
			mu.Lock()
			got = append(got, fmt.Sprintf("%s: peak %d %v", text, l.Peak, err))
			mu.Unlock()
		})
		if err != nil || res.ExitCode != 0 {
			t.Errorf("step: %+v %v", res, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the step did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "line 0: peak 7 <nil>|line 1: peak 7 <nil>|line 2: peak 7 <nil>"; strings.Join(got, "|") != want {
		t.Errorf("lines as handed on: %q, want %q", got, want)
	}
}
