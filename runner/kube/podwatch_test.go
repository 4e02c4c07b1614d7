package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

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
				sb, err := b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: fmt.Sprintf("t%02d", i), Policy: policy(1)}, Task: builtinTask()})
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

// A trial whose pod waits (Pending) does not look at it itself while the
// shared watch is open: those looks grew with the wait times the trials
// at once (4.9 gets a trial when pods took 13 s to run on kwok's fake
// nodes, docs/PERFORMANCE.md "Kubernetes at scale"). When the watch
// breaks and cannot start again, the trial looks, as before.
func TestWaitingPodNotLookedAtWhileTheWatchIsOpen(t *testing.T) {
	after, every := pollAfter, pollEvery
	pollAfter, pollEvery = 10*time.Millisecond, 20*time.Millisecond
	t.Cleanup(func() { pollAfter, pollEvery = after, every })
	p, cs, _ := fakePlatform(t)
	var (
		mu      sync.Mutex
		streams []watch.Interface
		refuse  bool
	)
	cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return true, nil, errors.New("the API server is away")
		}
		w, err := cs.Tracker().Watch(corev1.SchemeGroupVersion.WithResource("pods"), a.GetNamespace())
		streams = append(streams, w)
		return true, w, err
	})
	ctx := context.Background()
	rb, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	b := rb.(*backend)
	w := b.podWatch()
	waitFor(t, "the shared watch open", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.open > 0
	})
	gets := func(pod string) int {
		n := 0
		for _, a := range cs.Actions() {
			if g, ok := a.(k8stesting.GetAction); ok && a.GetVerb() == "get" && a.GetResource().Resource == "pods" && g.GetName() == pod {
				n++
			}
		}
		return n
	}
	// No one runs the pods: each waits until its start's context ends,
	// 20 looks' time.
	wait := func(id string) int {
		tctx, cancel := context.WithTimeout(ctx, 20*pollEvery)
		defer cancel()
		if _, err := b.Start(tctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: id, Policy: policy(1)}, Task: builtinTask()}); err == nil {
			t.Fatalf("%s ran, with no one to run it", id)
		}
		return gets(PodName("exp1", id))
	}
	// Its one look is Remove's, at the final status (the start failed).
	if n := wait("t01"); n > 1 {
		t.Errorf("a pending pod was looked at %d times while the shared watch was open, want 1 (the removal's)", n)
	}
	mu.Lock()
	refuse = true
	for _, s := range streams {
		s.Stop()
	}
	mu.Unlock()
	waitFor(t, "the shared watch broken", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.open == 0
	})
	if n := wait("t02"); n < 5 {
		t.Errorf("a pending pod was looked at %d times while the shared watch was down, want a look every %s", n, pollEvery)
	}
}
