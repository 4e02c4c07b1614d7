package store

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// What readSummary's checks cannot see, the seals do: a middle row
// edited by hand, a record edited in place with its length kept and the
// file's time put back (a copy, a checkout), a row without its seal. A
// report (ReadTrialsSealed) then reads the records themselves; the
// console's Load (ReadTrialsSummary) still trusts the summary, as it
// did, and the unsealed read shows what a report would have printed.
func TestSealedSummarySeesWhatTheChecksCannot(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, dir string)
	}{
		{"a middle row edited", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SummaryFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"oc":"failed"`), []byte(`"oc":"passed"`), 1), 0o600)
		}},
		{"a middle record edited, its length and time kept", func(t *testing.T, dir string) {
			p := filepath.Join(dir, TrialsFile)
			st, _ := os.Stat(filepath.Join(dir, SummaryFile))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"outcome":"failed"`), []byte(`"outcome":"passed"`), 1), 0o600)
			os.Chtimes(p, st.ModTime().Add(-time.Second), st.ModTime().Add(-time.Second))
		}},
		{"a middle row without its seal", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SummaryFile)
			b, _ := os.ReadFile(p)
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines[2] = regexp.MustCompile(`,"h":\d+}`).ReplaceAll(lines[2], []byte("}"))
			os.WriteFile(p, bytes.Join(lines, nil), 0o600)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, m := summaryExperiment(t)
			sealed, _, _, err := ReadTrialsSealed(dir, CheckRecord(m))
			if err != nil || !reflect.DeepEqual(sealed, wantSummaries(t, dir)) {
				t.Fatalf("before the edit: %+v %v", sealed, err)
			}
			c.spoil(t, dir)
			if _, err := readSummary(dir); err != nil {
				t.Fatalf("the edit is seen without the seals (%v): the case tests nothing", err)
			}
			want := wantSummaries(t, dir)
			got, _, _, err := ReadTrialsSealed(dir, CheckRecord(m))
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("sealed read %+v %v\nwant the records' %+v", got, err, want)
			}
			if c.name != "a middle row without its seal" {
				if unsealed, _, _, _ := ReadTrialsSummary(dir, nil); reflect.DeepEqual(unsealed, want) {
					t.Error("the summary's own checks read the records' trials: the edit was not in the summary's way")
				}
			}
		})
	}
}

// Every row of a summary, appended or built again by Open, is sealed to
// its record; a seal is the row's last member and covers the row's text.
func TestRowsAreSealed(t *testing.T) {
	dir, m := summaryExperiment(t)
	check := func(what string) {
		t.Helper()
		rows, err := readSummary(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := verifySeals(dir, linesOf(rows)); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	check("appended")
	os.Remove(filepath.Join(dir, SummaryFile))
	e, err := Open(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Append(result("t5", model.Passed)); err != nil {
		t.Fatal(err)
	}
	e.Close()
	check("built again by Open, then appended")
	for _, bad := range []string{`{"id":"a"}`, `{"id":"a","h":}`, `{"id":"a","h":12x}`, `{"id":"a","h":99999999999}`, `{"id":"a","x":{"h":1}}`} {
		if _, _, ok := rowSeal([]byte(bad + "\n")); ok {
			t.Errorf("%s read as sealed", bad)
		}
	}
	line := sealRow([]byte(`{"id":"a"}`), recordSum([]byte(`{"id":"a","task":"t"}`)))
	if text, sum, ok := rowSeal(line); !ok || string(text) != `{"id":"a"` || sum == 0 {
		t.Errorf("sealRow wrote %q: read back %q %d %v", line, text, sum, ok)
	}
}

func linesOf(rows []summaryRow) []TrialLine {
	out := make([]TrialLine, len(rows))
	for i := range rows {
		out[i] = rows[i].lineAt()
	}
	return out
}
