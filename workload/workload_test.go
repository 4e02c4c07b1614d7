package workload

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runProfile(t *testing.T, seed string, p Profile) (int, string, string) {
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
	code, out, _ := runProfile(t, "1", Profile{Style: "pytest", Requires: []string{"model.json"}})
	if code != 1 || !strings.Contains(out, "model.json was never produced") {
		t.Errorf("missing marker: exit %d output %q", code, out)
	}
	code, out, _ = runProfile(t, "1", Profile{Style: "pip", Packages: []string{"pandas"}, BaseMB: 2, DurationMS: 30, Writes: []string{"model.json"}})
	if code != 0 || !strings.Contains(out, "Collecting pandas") || !strings.Contains(out, "Successfully installed pandas-") {
		t.Errorf("pip step: exit %d output %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(markerDir, "model.json")); err != nil {
		t.Errorf("marker not written: %v", err)
	}
	code, _, _ = runProfile(t, "1", Profile{Style: "pytest", Requires: []string{"model.json"}})
	if code != 0 {
		t.Errorf("verifier with its marker present exited %d", code)
	}
}

func TestFailChanceIsSeededAndReplayable(t *testing.T) {
	fails := 0
	for seed := 0; seed < 40; seed++ {
		s := string(rune('0'+seed%10)) + strings.Repeat("7", seed/10)
		a, outA, _ := runProfile(t, s, Profile{Style: "python", FailChance: 0.5})
		b, outB, _ := runProfile(t, s, Profile{Style: "python", FailChance: 0.5})
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

func TestProfileValidation(t *testing.T) {
	bad := []Profile{
		{DurationMS: -1},
		{BaseMB: -5},
		{Children: 100},
		{JitterPct: 100},
		{SpikeChance: 2},
		{OnChildKilled: "explode"},
		{Style: "cobol"},
		{BaseMB: 1 << 20},
		{CPUWorkMS: -1},
		{CPUWorkMS: 10, CPUThreads: 65},
		{DeadlineMS: 100}, // a deadline for no work
	}
	for _, p := range bad {
		if p.Validate() == nil {
			t.Errorf("%+v accepted", p)
		}
		if _, err := p.Argv("s"); err == nil {
			t.Errorf("Argv of %+v accepted", p)
		}
	}
	argv, err := Profile{Style: "pip", DurationMS: 5}.Argv("install")
	if err != nil || argv[0] != Binary || argv[3] != "install" {
		t.Fatalf("argv %v %v", argv, err)
	}
	var back Profile
	if err := json.Unmarshal([]byte(argv[5]), &back); err != nil || back.Style != "pip" {
		t.Errorf("profile does not round-trip: %v %+v", err, back)
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

func FuzzProfileJSON(f *testing.F) {
	f.Add(`{"style":"pip","packages":["pandas"],"duration_ms":10,"base_mb":1}`)
	f.Add(`{"children":64,"child_mb":1000}`)
	f.Add(`{"on_child_killed":"retry","jitter_pct":99.9}`)
	f.Fuzz(func(t *testing.T, s string) {
		var p Profile
		if json.Unmarshal([]byte(s), &p) != nil {
			return
		}
		if p.Validate() == nil {
			if _, err := p.Argv("s"); err != nil {
				t.Fatalf("valid profile %+v has no argv: %v", p, err)
			}
		}
	})
}
