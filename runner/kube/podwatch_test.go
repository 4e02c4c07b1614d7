package kube

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// Trials' pods are followed on one shared watch, not three watches and
// three looks of each trial's own: the API requests of a trial's start
// and removal do not include a watch, and the watches do not grow with
// the trials (1,000 trials on kwok's fake nodes: docs/PERFORMANCE.md,
// "Kubernetes at scale").
func TestTrialsShareOneWatch(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	runAll(t, cs, "hr")
	ctx := context.Background()
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	before := len(cs.Actions())
	const trials, atOnce = 24, 6
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range atOnce {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				sb, err := b.Start(ctx, "exp1", model.Trial{ID: fmt.Sprintf("t%02d", i), Policy: policy(1)}, builtinTask())
				if err != nil {
					t.Error(err)
					continue
				}
				if _, err := sb.Remove(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := range trials {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	by := map[string]int{}
	for _, a := range cs.Actions()[before:] {
		if a.GetResource().Resource == "" {
			continue
		}
		by[a.GetVerb()+" "+a.GetResource().Resource]++
	}
	t.Logf("%d trials, %d at once: %v", trials, atOnce, by)
	// runAll's own watch of the namespace is one of the fake's actions too
	// (before the backend's); the backend's is the one more.
	if by["watch pods"] > 1 {
		t.Errorf("%d pod watches for %d trials, want the one shared watch", by["watch pods"], trials)
	}
	// Each trial: create its pod and NetworkPolicy, one look at the
	// pod's final status, delete both. The shared watch's first listing
	// is once.
	perTrial := float64(by["create pods"]+by["get pods"]+by["delete pods"]+by["create networkpolicies"]+by["delete networkpolicies"]) / trials
	if perTrial > 5 || by["list pods"] > 1 {
		t.Errorf("%.2f pod and policy requests per trial and %d listings, want at most 5 and 1", perTrial, by["list pods"])
	}
}
