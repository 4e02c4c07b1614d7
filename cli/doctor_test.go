package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workloadImages lists the engine's workload images, tag and id.
func workloadImages(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("docker", "images", "--no-trunc", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}", "headroom-workload").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// doctor changes nothing: with no workload image for this headroom, it
// says what a run would build instead of building it (and moving the
// image's latest tag).
func TestDoctorBuildsNothing(t *testing.T) {
	needEngine(t)
	// A copy of headroom with bytes appended is a new binary to the
	// image's content digest: its workload image cannot exist yet.
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "headroom")
	marker := fmt.Sprintf("\ndoctor-test %d\n", time.Now().UnixNano())
	if err := os.WriteFile(fresh, append(data, marker...), 0o755); err != nil {
		t.Fatal(err)
	}
	before := workloadImages(t)
	out, err := exec.Command(fresh, "doctor").CombinedOutput()
	after := workloadImages(t)
	if before != after {
		t.Errorf("doctor changed the workload images:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if err != nil || !strings.Contains(string(out), "doctor builds nothing") || !strings.Contains(string(out), "headroom images build") {
		t.Errorf("doctor: %v\n%s", err, out)
	}
}
