package kube

import (
	"os/exec"
	"strings"
	"testing"
)

// `make kube-test` makes what its tests need: 4 of its 15 cluster tests
// failed with "image headroom-debian:bookworm is not on this engine"
// after a plain `make kube-up && make kube-test` (issue #39).
func TestKubeTestTargetMakesTheImagesItNeeds(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out, err := exec.Command("make", "-n", "-C", "../..", "kube-test").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n kube-test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "images build --real") {
		t.Errorf("make -n kube-test does not make the real-task images first:\n%s", out)
	}
}
