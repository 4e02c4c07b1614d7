package workload

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/workload/wire"
)

func runProfile(t *testing.T, seed string, p wire.Profile) (int, string, string) {
	t.Helper()
	t.Setenv(SeedEnv, seed)
	argv, err := p.Argv("step")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(argv[1:], &out, &errb)
	return code, out.String(), errb.String()
}

func TestStepWritesAndRequiresMarkers(t *testing.T) {
	markerDir = t.TempDir()
	t.Cleanup(func() { markerDir = MarkerDir })
	code, out, _ := runProfile(t, "1", wire.Profile{Style: "pytest", Requires: []string{"model.json"}})
	if code != 1 || !strings.Contains(out, "model.json was never produced") {
		t.Errorf("missing marker: exit %d output %q", code, out)
	}
	code, out, _ = runProfile(t, "1", wire.Profile{Style: "pip", Packages: []string{"pandas"}, BaseMB: 2, DurationMS: 30, Writes: []string{"model.json"}})
	if code != 0 || !strings.Contains(out, "Collecting pandas") || !strings.Contains(out, "Successfully installed pandas-") {
		t.Errorf("pip step: exit %d output %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(markerDir, "model.json")); err != nil {
		t.Errorf("marker not written: %v", err)
	}
	code, _, _ = runProfile(t, "1", wire.Profile{Style: "pytest", Requires: []string{"model.json"}})
	if code != 0 {
		t.Errorf("verifier with its marker present exited %d", code)
	}
}

func TestFailChanceIsSeededAndReplayable(t *testing.T) {
	fails := 0
	for seed := 0; seed < 40; seed++ {
		s := string(rune('0'+seed%10)) + strings.Repeat("7", seed/10)
		a, outA, _ := runProfile(t, s, wire.Profile{Style: "python", FailChance: 0.5})
		b, outB, _ := runProfile(t, s, wire.Profile{Style: "python", FailChance: 0.5})
		if a != b || outA != outB {
			t.Fatalf("seed %s replayed differently: %d/%d", s, a, b)
		}
		if a != 0 {
			fails++
		}
	}
	if fails < 8 || fails > 32 {
		t.Errorf("%d of 40 seeded steps failed at fail_chance 0.5", fails)
	}
}

func TestBadInvocations(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{nil, {"dance"}, {"run", "--profile", "{"}, {"run", "--profile", `{"style":"cobol"}`}} {
		if code := Main(args, &out, &errb); code != 2 {
			t.Errorf("Main(%q) = %d, want 2", args, code)
		}
	}
}
