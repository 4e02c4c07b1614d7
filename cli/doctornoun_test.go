package cli

import (
	"testing"

	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/kube"
)

// doctor's leftovers line names the platform as a noun (issue #39: "0
// headroom sandboxes on the kubernetes"), in the backend's own words.
func TestDoctorNamesThePlatform(t *testing.T) {
	runner.Register(kube.Definition(nil))
	for backend, want := range map[string]string{"docker": "Docker engine", "kubernetes": "kubernetes cluster"} {
		if got := platformNoun(backend); got != want {
			t.Errorf("%s: %q, want %q", backend, got, want)
		}
	}
}
