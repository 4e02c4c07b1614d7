//go:build hostile

package e2e

import (
	"os"
	"testing"
)

// TestMain removes the suite's one build of headroom (hostileBin) once
// every row has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedBin.dir != "" {
		os.RemoveAll(sharedBin.dir)
	}
	os.Exit(code)
}
