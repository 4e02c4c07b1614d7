package cli_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/runner/kube"
	"github.com/headroom-eval/headroom/store"
)

// clusterKubeconfig is the real cluster's kubeconfig (make kube-up's, or
// HEADROOM_KUBECONFIG's); without one, or when its API server does not
// answer (a kubeconfig a stopped cluster left behind), the test skips,
// unless HEADROOM_KUBE_REQUIRED says it must run (make kube-test).
func clusterKubeconfig(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Kubernetes cluster (-short)")
	}
	skip := func(why string) {
		if os.Getenv("HEADROOM_KUBE_REQUIRED") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	kc := os.Getenv("HEADROOM_KUBECONFIG")
	if kc == "" {
		kc = "/tmp/headroom-kube/kubeconfig"
	}
	if _, err := os.Stat(kc); err != nil {
		skip(fmt.Sprintf("no cluster: %s is missing (make kube-up, or set HEADROOM_KUBECONFIG)", kc))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := kube.Open(ctx, map[string]string{kube.OptKubeconfig: kc, kube.OptNamespace: "headroom-cli-test"}, docker.OpenBuilder)
	if err != nil {
		skip("cluster not reachable: " + err.Error())
	}
	p.Close()
	return kc
}

// The same sweep as TestHeadlessSweepEndToEnd, through the real binary on
// a real cluster: killed at 1x in the step that allocates, passed
// uncapped, the kill shown as it lands, the manifest naming the backend
// and the pod's resources, and no pod left.
func TestClusterHeadlessSweep(t *testing.T) {
	kc := clusterKubeconfig(t)
	root := t.TempDir()
	backend := []string{"--backend", "kubernetes", "--kubeconfig", kc, "--namespace", "headroom-cli-test"}
	r := headroom(t, append([]string{"run", "--tasks-dir", "testdata/tasks", "--tasks", "tiny", "--ratios", "1,uncapped", "--repeats", "2", "--seed", "5", "--format", "json", "--out", root}, backend...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	_, got := jsonMatrix(t, r.stdout)
	if fmt.Sprint(got["1x"]) != "[oom-killed oom-killed]" || fmt.Sprint(got["uncapped"]) != "[passed passed]" {
		t.Errorf("matrix %v\n%s", got, r.stderr)
	}
	if !strings.Contains(r.stderr, "killed in step install") {
		t.Errorf("progress should show the OOM kill as it lands:\n%s", r.stderr)
	}
	dir := onlyExperiment(t, root)
	m, err := store.ReadManifest(dir)
	if err != nil || m.Engine.Name() != "kubernetes" || !strings.Contains(m.Tasks[0].Reproduce["1x"], "limits") {
		t.Errorf("manifest engine %+v reproduce %q (%v)", m.Engine, m.Tasks[0].Reproduce, err)
	}
	results, _, err := store.ReadTrials(dir)
	if err != nil || len(results) != 4 {
		t.Fatalf("%d records (%v)", len(results), err)
	}
	for _, res := range results {
		if !strings.HasPrefix(res.SampleSource, "probe") || res.Policy.GuaranteeBytes != 48*model.MiB {
			t.Errorf("%s: samples from %q, guarantee %d", res.ID, res.SampleSource, res.Policy.GuaranteeBytes)
		}
	}
	if c := headroom(t, append([]string{"clean", "--dry-run"}, backend...)...); c.code != 0 || !strings.Contains(c.stdout, "nothing labelled headroom") {
		t.Errorf("after the sweep, clean --dry-run says:\n%s%s", c.stdout, c.stderr)
	}
}

// A real benchmark task directory (Harbor format, its own Dockerfile-less
// pinned image, PID 1 its image's) on the cluster: its trials are sampled
// by the probe exec'd beside PID 1 at the same rate as a built-in task's,
// the oracle killed at 1x in the step that allocates and passing uncapped.
func TestClusterTaskDirectory(t *testing.T) {
	kc := clusterKubeconfig(t)
	root := t.TempDir()
	r := headroom(t, "run", "--backend", "kubernetes", "--kubeconfig", kc, "--namespace", "headroom-cli-test",
		"--tasks-dir", "../runner/docker/testdata/tb", "--tasks", "oracle-heavy", "--agents", "oracle", "--ratios", "1,uncapped", "--repeats", "1", "--out", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	results, _, err := store.ReadTrials(onlyExperiment(t, root))
	if err != nil || len(results) != 2 {
		t.Fatalf("%d records (%v)", len(results), err)
	}
	for _, res := range results {
		want := model.Passed
		if res.Ratio.K == 1 {
			want = model.OOMKilled
		}
		if res.Outcome != want || !strings.HasPrefix(res.SampleSource, "probe") || res.SampleRateHz < 10 || res.PeakWorkingSetBytes == 0 {
			t.Errorf("%s at %s: %s (%s), samples from %q at %.1f Hz, peak %d", res.Task, res.Ratio, res.Outcome, res.Reason, res.SampleSource, res.SampleRateHz, res.PeakWorkingSetBytes)
		}
	}
}
