package storegen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// A generated experiment reads back whole through the store.
func TestWriteReadsBack(t *testing.T) {
	dir, err := Write(t.TempDir(), Realistic(60))
	if err != nil {
		t.Fatal(err)
	}
	rs, torn, err := store.ReadTrials(dir)
	if err != nil || torn || len(rs) != 60 {
		t.Fatalf("%d records, torn %v, err %v", len(rs), torn, err)
	}
	st, _ := os.Stat(filepath.Join(dir, store.TrialsFile))
	t.Logf("%d B per record", st.Size()/60)
	s, log, err := store.ReadTrace(dir, rs[7].ID)
	if err != nil || len(s) < 100 || len(log) < 10 {
		t.Fatalf("trace %d samples, log %d lines, err %v", len(s), len(log), err)
	}
	if rs[1].Outcome != model.OOMKilled || len(rs[1].OOMs) == 0 {
		t.Errorf("shape 1 should be killed: %+v", rs[1].Outcome)
	}
}
