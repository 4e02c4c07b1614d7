package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A separate verifier's artifact directory is named after its headroom;
// the reap removes those of a headroom proven gone and leaves this
// process's own and one whose name has no complete owner.
func TestReapArtifacts(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mine, err := artifactsDir()
	if err != nil {
		t.Fatal(err)
	}
	ended := exec.Command("true")
	ended.Run()
	boot := strings.ReplaceAll(bootID(), "-", "")
	dead := filepath.Join(os.TempDir(), artifactsPrefix+strconv.Itoa(ended.Process.Pid)+"-1-"+boot+"-"+pidNamespace()+"-x")
	anon := filepath.Join(os.TempDir(), artifactsPrefix+"123456")
	// An older headroom's name (pid-start-random): its owner's boot and
	// pid namespace unknown, never proven gone.
	older := filepath.Join(os.TempDir(), artifactsPrefix+strconv.Itoa(ended.Process.Pid)+"-1-x")
	for _, d := range []string{dead, anon, older} {
		os.MkdirAll(filepath.Join(d, "logs", "artifacts"), 0o700)
		os.WriteFile(filepath.Join(d, "logs", "artifacts", "big"), []byte("x"), 0o600)
	}
	said := ReapArtifacts()
	if len(said) != 1 || !strings.Contains(said[0], dead) || !strings.Contains(said[0], "no such process") {
		t.Errorf("reaped %q, want the dead owner's alone", said)
	}
	for d, want := range map[string]bool{mine: true, dead: false, anon: true, older: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s there: %v, want %v", d, err == nil, want)
		}
	}
}
