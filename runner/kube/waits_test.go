package kube

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// saidWaits collects what a start says it waits for; each reason is also
// sent on the channel.
func saidWaits() (func(string), func() []string, <-chan string) {
	var mu sync.Mutex
	var waits []string
	ch := make(chan string, 64)
	tell := func(r string) {
		mu.Lock()
		waits = append(waits, r)
		mu.Unlock()
		select {
		case ch <- r:
		default:
		}
	}
	return tell, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), waits...)
	}, ch
}

// An API server that stops answering (frozen: its connections open, no
// reply) while a pod is created is said live, and the wait is the
// trial's queue time, not its own (issue #39: the next pods' starts
// waited 99 s with nothing said, queued_for in microseconds).
func TestFrozenAPIServerWaitIsSaidAndQueued(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := fakePlatform(t)
	p.slowAfter = 50 * time.Millisecond
	runAll(t, cs, "hr")
	tell, waits, said := saidWaits()
	frozen := true
	cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, kruntime.Object, error) {
		if !frozen {
			return false, nil, nil
		}
		frozen = false
		// Frozen until the trial has said it waits (or long past it).
		deadline := time.After(5 * time.Second)
		for {
			select {
			case r := <-said:
				if strings.Contains(r, "has not answered") {
					return false, nil, nil
				}
			case <-deadline:
				return false, nil, nil
			}
		}
	})
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t1", Policy: policy(1)}, Task: builtinTask(), Waiting: tell})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove(context.Background())
	got := waits()
	if len(got) == 0 || !strings.Contains(got[0], "the kubernetes API server has not answered creating pod") {
		t.Errorf("the frozen API server's wait was not said: %q", got)
	}
	if q := sb.(runner.QueueWaiter).QueuedFor(); q < p.slowAfter {
		t.Errorf("queued for %s: the API server's wait is not the trial's queue time", q)
	}
}

// A pod the scheduler holds until the trial is cancelled leaves the wait
// in the start's error (runner.StartWait), said as unschedulable: the
// record's queue time and reason (issue #39: Pending for 10 minutes,
// queued_for 12µs, no "unschedulable").
func TestUnschedulableCancelledStartKeepsItsWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, cs, _ := fakePlatform(t)
	w, err := cs.CoreV1().Pods("hr").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			pod := ev.Object.(*corev1.Pod).DeepCopy()
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient memory."}}}
			cs.CoreV1().Pods("hr").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
		}
	}()
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tell, _, said := saidWaits()
	go func() {
		for r := range said {
			if strings.Contains(r, "unschedulable") {
				cancel()
				return
			}
		}
	}()
	_, err = b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t1", Policy: policy(1)}, Task: builtinTask(), Waiting: tell})
	if err == nil {
		t.Fatal("started")
	}
	d, why := runner.StartWait(err)
	if d <= 0 || !strings.HasPrefix(why, "unschedulable (0/1 nodes are available") {
		t.Errorf("the cancelled start's wait: %s %q (%v)", d, why, err)
	}
}
