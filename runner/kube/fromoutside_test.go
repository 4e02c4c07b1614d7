package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// The causes that were Docker's only: a pod resized in place (its memory
// limit changed mid-trial) and a container frozen on its node (the
// probe's readings stopped) are said in the trial's final state, as a
// docker update and a docker pause are (issue #39).
func TestPodResizedOrFrozenFromOutside(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	runAll(t, cs, "hr")
	sb := startOne(t, p, runner.SandboxOptions{}, "t1", builtinTask())
	pod := sb.last.DeepCopy()
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == mainContainer {
			pod.Spec.Containers[i].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("256Mi")
		}
	}
	sb.seen(pod)
	now := time.Now()
	sb.probeSample(workload.ProbeLine{Kind: workload.ProbeSample, Time: now.Add(-5 * time.Second), Reading: cgroup.Reading{Usage: 1 << 20}})
	sb.probeSample(workload.ProbeLine{Kind: workload.ProbeSample, Time: now, Reading: cgroup.Reading{Usage: 1 << 20}})
	f, err := sb.Remove(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// From the container's own limit: the policy's 128 MiB and the
	// probe's (podConfig.containerPolicy).
	if want := limitText(128<<20+model.DriverMemoryBytes) + " to 256MiB (the pod resized in place)"; string(f.LimitChanged) != want {
		t.Errorf("limit changed: %q", f.LimitChanged)
	}
	if !strings.Contains(string(f.Frozen), "frozen") || !strings.Contains(string(f.Frozen), "for 5s") {
		t.Errorf("frozen: %q", f.Frozen)
	}
}
