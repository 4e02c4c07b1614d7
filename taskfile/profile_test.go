package taskfile

import (
	"os/exec"
	"strings"
	"testing"
)

// The task schema builds a step's command from the wire alone: loading a
// task file compiles none of the in-container program (its nftables and
// netlink code, 14 packages), and the wire is the standard library only.
func TestTaskSchemaCompilesNoInContainerProgram(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		return strings.Fields(string(out))
	}
	for _, dep := range deps(".") {
		if dep == "github.com/headroom-eval/headroom/workload" || strings.Contains(dep, "nftables") || strings.Contains(dep, "netlink") {
			t.Errorf("taskfile depends on %s", dep)
		}
	}
	for _, dep := range deps("../workload/wire") {
		if dep != "github.com/headroom-eval/headroom/workload/wire" && strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") {
			t.Errorf("workload/wire depends on %s, outside the standard library", dep)
		}
	}
}
