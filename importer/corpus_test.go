package importer

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/report"
)

// The public runs themselves, when a copy is at hand: every run
// directory (one holding results.json) under HEADROOM_IMPORT_CORPUS,
// imported alone, gives the run's own pass count and accuracy exactly
// (docs/PARITY.md says where the copy came from and what it gave).
// Harbor job directories under it (a config.json beside trial
// directories) are checked the same way against their result.json.
func TestImportCorpusReproducesOwnScores(t *testing.T) {
	root := os.Getenv("HEADROOM_IMPORT_CORPUS")
	if root == "" {
		t.Skip("HEADROOM_IMPORT_CORPUS not set: no copy of public runs to check against")
	}
	var tb []string
	withResult := map[string]bool{} // directories holding config.json and result.json
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch d.Name() {
		case "results.json":
			tb = append(tb, filepath.Dir(p))
		case "config.json":
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), "result.json")); err == nil {
				withResult[filepath.Dir(p)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A Harbor job is such a directory above trial directories that are.
	jobSet := map[string]bool{}
	for d := range withResult {
		if withResult[filepath.Dir(d)] {
			jobSet[filepath.Dir(d)] = true
		}
	}
	var harbor []string
	for d := range jobSet {
		harbor = append(harbor, d)
	}
	sort.Strings(harbor)
	check := func(kind, dir string, im Import, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s %s: %v", kind, dir, err)
			return
		}
		src := im.Manifest.Imported[0]
		line := strings.Join(report.OwnScoreLines(src, im.Trials), "\n")
		switch {
		case src.Own == nil:
			t.Logf("%s %s: writes no score of its own: %s", kind, dir, strings.TrimSpace(line))
		case !strings.HasSuffix(line, ": the same"):
			t.Errorf("%s %s:\n%s", kind, dir, line)
		default:
			t.Logf("%s %s: %d of %d, the same", kind, dir, src.Own.Passes, src.Own.Trials)
		}
	}
	for _, d := range tb {
		im, err := TerminalBench([]string{d}, Options{})
		check("terminal-bench", d, im, err)
	}
	for _, d := range harbor {
		im, err := Harbor([]string{d}, Options{})
		check("harbor", d, im, err)
	}
	if len(tb)+len(harbor) == 0 {
		t.Fatalf("HEADROOM_IMPORT_CORPUS=%s holds no terminal-bench run (results.json) and no Harbor job", root)
	}
	t.Logf("%d terminal-bench runs, %d Harbor jobs", len(tb), len(harbor))
}
