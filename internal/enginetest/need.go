package enginetest

import (
	"os"
	"os/exec"
	"testing"
)

// Need gates a test on something outside the process (the Docker engine,
// tmux, a cluster): under -short t skips without looking; otherwise check
// runs and, when it fails, t skips saying what was missing, or fails
// where CI is set (CI runs every test).
func Need(t testing.TB, what string, check func() error) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs the %s (-short)", what)
	}
	if err := check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the %s is required in CI: %v", what, err)
		}
		t.Skipf("no %s: %v", what, err)
	}
}

// NeedDocker is Need on the Docker engine as the docker command sees it.
func NeedDocker(t testing.TB) {
	t.Helper()
	Need(t, "Docker engine", exec.Command("docker", "info").Run)
}
