package cli

import "testing"

// doctor's leftovers line names the platform as a noun (issue #39: "0
// headroom sandboxes on the kubernetes").
func TestDoctorNamesThePlatform(t *testing.T) {
	for backend, want := range map[string]string{"docker": "Docker engine", "kubernetes": "kubernetes cluster"} {
		if got := platformNoun(backend); got != want {
			t.Errorf("%s: %q, want %q", backend, got, want)
		}
	}
}
