package cli

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/store/storegen"
)

// Every report format reads the same from the trials' summary as from
// their records (the summary not trusted: read as before there was one),
// and the console's Load and one trial's record from the history too.
func TestSummaryReadsAsTheRecords(t *testing.T) {
	dir, err := storegen.Write(t.TempDir(), storegen.Spec{Trials: 95, Duration: 2 * time.Minute, Steps: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	run := func(format string) string {
		var out, errs bytes.Buffer
		root := NewRoot(&out, &errs)
		root.SetArgs([]string{"report", dir, "--format", format})
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v %s", format, err, errs.String())
		}
		return out.String()
	}
	for _, format := range report.Formats {
		fromSummary := run(format)
		var fromRecords string
		storegen.WithoutSummary(dir, func() { fromRecords = run(format) })
		if fromSummary != fromRecords {
			t.Errorf("%s: the report from the summary differs from the records':\n%s\nwant\n%s", format, fromSummary, fromRecords)
		}
	}

	list, err := history(filepath.Dir(dir))()
	if err != nil || len(list) != 1 {
		t.Fatal(len(list), err)
	}
	plan, results, err := list[0].Load()
	if err != nil || len(results) != 95 {
		t.Fatal(len(results), err)
	}
	var rplan any
	var rresults any
	storegen.WithoutSummary(dir, func() {
		p, rs, err := list[0].Load()
		if err != nil {
			t.Fatal(err)
		}
		rplan, rresults = p, rs
	})
	if !reflect.DeepEqual(plan, rplan) || !reflect.DeepEqual(results, rresults) {
		t.Error("Load reads otherwise from the summary than from the records")
	}
	whole, _, err := store.ReadTrialsBrief(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := list[0].Record(results[40].ID)
	if err != nil || !reflect.DeepEqual(r, whole[40]) {
		t.Errorf("Record(%s): %v; want the record without its output", results[40].ID, err)
	}
	if len(results[40].Activities) != 0 || len(r.Activities) == 0 {
		t.Errorf("the summary has %d processes, the record %d: want none and some", len(results[40].Activities), len(r.Activities))
	}
}
