package taskfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// Twenty services, each a sidecar at 1 GiB beside a 64 MiB task, are
// refused at load, naming the line of the first one too many: in a
// compose file (Harbor, terminal-bench) and in a headroom task file.
// The public tasks' compose files in testdata/compose have at most three
// services, the task's own among them.
func TestTooManyServicesAreRefusedAtTheirLine(t *testing.T) {
	var compose strings.Builder
	compose.WriteString("services:\n  main:\n    image: x\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&compose, "  s%d:\n    image: busybox\n", i)
	}
	task := composeTask(t.TempDir())
	_, err := parseCompose("docker-compose.yaml", []byte(compose.String()), ".", harborHarness(&task, ".", ""))
	// main is line 2, s1 line 4, s8 line 18, s9 (the ninth beside main) 20.
	want := fmt.Sprintf("docker-compose.yaml:20: service s9 is the 10th: a task runs at most %d services beside its own container", model.MaxSidecars)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("compose with 21 services: %v\nwant %q (taskfile/compose.go parseCompose, model.MaxSidecars)", err, want)
	}
	var toml strings.Builder
	toml.WriteString("[task]\nname = \"many/services\"\n[environment]\nimage = \"builtin\"\nmemory = \"64M\"\n[[agents]]\nname = \"a\"\n[[agents.steps]]\ncommand = [\"true\"]\n[verifier]\ncommand = [\"true\"]\n")
	first := strings.Count(toml.String(), "\n") + 1
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&toml, "[[services]]\nname = \"s%d\"\nimage = \"builtin\"\n", i)
	}
	_, err = Parse("task.toml", []byte(toml.String()))
	want = fmt.Sprintf("task.toml:%d: [[services]] #9: a task runs at most 8 services beside its own container", first+3*8)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("task.toml with 20 [[services]]: %v\nwant %q (taskfile/servicecap.go checkServiceCount)", err, want)
	}
	// Eight load.
	var eight strings.Builder
	eight.WriteString(toml.String()[:strings.Index(toml.String(), "[[services]]")])
	for i := 1; i <= model.MaxSidecars; i++ {
		fmt.Fprintf(&eight, "[[services]]\nname = \"s%d\"\nimage = \"builtin\"\n", i)
	}
	if l, err := Parse("task.toml", []byte(eight.String())); err != nil || len(l.Task.Sidecars) != model.MaxSidecars {
		t.Errorf("%d services: %v (%d sidecars), want them loaded", model.MaxSidecars, err, len(l.Task.Sidecars))
	}
}
