package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// A report of an experiment whose planned trials are not all recorded
// says how many have none, and what runs them (records cut from
// trials.jsonl read as a smaller, complete-looking experiment before).
func TestReportSaysPlannedTrialsWithoutARecord(t *testing.T) {
	m := store.Manifest{ID: "exp", Status: "finished", Trials: 4}
	two := []model.TrialResult{{Trial: model.Trial{ID: "t0001"}}, {Trial: model.Trial{ID: "t0002"}}}
	got := missingRecords(m, two, "/x/exp")
	for _, want := range []string{"2 of the 4 planned trials have no record", "records were lost from trials.jsonl", "run --resume /x/exp"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if got := missingRecords(m, append(two, model.TrialResult{Trial: model.Trial{ID: "t0003"}}, model.TrialResult{Trial: model.Trial{ID: "t0004"}}), "/x/exp"); got != "" {
		t.Errorf("every planned trial recorded, yet: %q", got)
	}
}

// An id not under the store's root may be one a run kept under its own
// --out (a new user's try: `report ID` found nothing, and said only to
// list the store).
func TestAnExperimentNotFoundPointsToOut(t *testing.T) {
	_, err := findExperiment("20261206-000000-abcd", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "give the same --out") {
		t.Errorf("%v: want the hint that a run's --out keeps its experiments", err)
	}
}

// An experiment given as "DIR/" (a shell completes it so) is DIR: the
// printed resume line took DIR itself for --out, and that line then
// found no experiment (the twenty-fifth attacker's 5).
func TestAnExperimentDirectoryWithATrailingSlashIsItself(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "20261207-050842-4153")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.ManifestFile), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := findExperiment(dir+"/", "/elsewhere")
	if err != nil || got != dir || filepath.Dir(got) != root {
		t.Errorf("findExperiment(%q) = %q, %v; want %q under %q", dir+"/", got, err, dir, root)
	}
}
