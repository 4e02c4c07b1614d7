package enginetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildHeadroom builds this tree's console and, beside it, the
// in-container program (static: hr-workload runs in FROM scratch images)
// into dir, and returns the console's path: what the tests that drive
// headroom as a user does run.
func BuildHeadroom(dir string) (string, error) {
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"github.com/headroom-eval/headroom", "github.com/headroom-eval/headroom/cmd/hr-workload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build headroom: %v\n%s", err, out)
	}
	return filepath.Join(dir, "headroom"), nil
}
