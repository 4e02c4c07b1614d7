package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// A pod's pids limit is its node's podPidsLimit: the policy's is applied
// where the node's is the same, and otherwise the record names the one
// that held, or that it could not be known.
func TestPidsLimitEnforced(t *testing.T) {
	p, _, _ := fakePlatform(t)
	reads := 0
	configs := map[string]string{
		"same":  `{"kubeletconfig":{"podPidsLimit":1024,"maxPods":110}}`,
		"wider": `{"kubeletconfig":{"podPidsLimit":4096}}`,
		"none":  `{"kubeletconfig":{"podPidsLimit":-1}}`,
		"unset": `{"kubeletconfig":{}}`,
	}
	p.readKubeletConfig = func(_ context.Context, node string) ([]byte, error) {
		reads++
		if c, ok := configs[node]; ok {
			return []byte(c), nil
		}
		return nil, errors.New(`nodes "x" is forbidden: User cannot get resource "nodes/proxy"`)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		node string
		want int64
		say  string
	}{
		{"same", 1024, ""},
		{"same", 0, "1024: node same's kubelet podPidsLimit, for the whole pod; the policy's is none"},
		{"wider", 1024, "4096: node wider's kubelet podPidsLimit, for the whole pod; the policy's is 1024"},
		{"none", 1024, "none: node none's kubelet sets no podPidsLimit; the policy's is 1024"},
		{"unset", 0, ""},
		{"forbidden", 1024, `unknown: node forbidden's kubelet configuration could not be read (nodes "x" is forbidden`},
		{"forbidden", 0, ""},
	} {
		got := p.pidsLimitEnforced(ctx, tc.node, tc.want)
		if tc.say == "" && got != "" || !strings.HasPrefix(got, tc.say) {
			t.Errorf("node %s, policy %d: %q, want %q", tc.node, tc.want, got, tc.say)
		}
	}
	if reads != 5 {
		t.Errorf("%d reads of the kubelet's configuration for 5 nodes: read once per node", reads)
	}
}

// On the fake cluster: the probe's refused forks and the node's limit
// that held reach the trial's Final.
func TestPidsOnFakeCluster(t *testing.T) {
	p, cs, fp := fakePlatform(t)
	fp.pidsHits = 7
	p.readKubeletConfig = func(context.Context, string) ([]byte, error) {
		return []byte(`{"kubeletconfig":{"podPidsLimit":256}}`), nil
	}
	w, err := cs.CoreV1().Pods("hr").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added {
				pod := ev.Object.(*corev1.Pod).DeepCopy()
				pod.Spec.NodeName = "n1"
				pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
					Name: mainContainer, ContainerID: "containerd://cid", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
				if _, err := cs.CoreV1().Pods("hr").Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
					t.Error(err)
				}
				return
			}
		}
	}()
	b, err := p.Sandboxes(context.Background(), runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pol := policy(1)
	pol.PidsLimit = model.DefaultPidsLimit
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t1", Policy: pol}, Task: builtinTask()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sb.Remove(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f.PidsLimitHits != 7 || f.PidsLimitEnforced != "256: node n1's kubelet podPidsLimit, for the whole pod; the policy's is 1024" {
		t.Errorf("final: %d refused forks, limit %q", f.PidsLimitHits, f.PidsLimitEnforced)
	}
}
