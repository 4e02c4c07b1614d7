package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/store/storegen"
)

// scaleDir is the generated experiment of n trials (made once, kept).
func scaleDir(b *testing.B, n int) string {
	b.Helper()
	dir, err := storegen.Cached(storegen.Realistic(n))
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// Resume's scan: the manifest and every record, indexed by trial id
// (what session.Resume reads before it plans the missing trials), with
// the whole records (read=full, before) and without the steps' output
// (read=brief, what it read before the summary) and the summary rows
// (read=summary, what it reads now).
// go test -run '^$' -bench Scale -benchmem ./store
func BenchmarkScaleResumeScan(b *testing.B) {
	for _, n := range storegen.Sizes() {
		for _, read := range []struct {
			name string
			f    func(string) ([]model.TrialResult, bool, error)
		}{{"full", store.ReadTrials}, {"brief", store.ReadTrialsBrief}, {"summary", func(dir string) ([]model.TrialResult, bool, error) {
			rs, _, torn, err := store.ReadTrialsSummary(dir, nil)
			return rs, torn, err
		}}} {
			b.Run(fmt.Sprintf("trials=%d/read=%s", n, read.name), func(b *testing.B) {
				if read.name == "full" {
					storegen.SkipWhole(b, n)
				}
				dir := scaleDir(b, n)
				op := func() any {
					if _, err := store.ReadManifest(dir); err != nil {
						b.Fatal(err)
					}
					rs, _, err := read.f(dir)
					if err != nil || len(rs) != n {
						b.Fatalf("%d records, %v", len(rs), err)
					}
					recorded := make(map[string]*model.TrialResult, len(rs))
					for i := range rs {
						recorded[rs[i].ID] = &rs[i]
					}
					return recorded
				}
				storegen.Bench(b, op)
			})
		}
	}
}

// The history screen's listing: 500 experiments' manifests (of 89 tasks
// each), read whole (read=manifests, before) and as List reads them now
// (read=listing).
func BenchmarkScaleList500(b *testing.B) {
	root := b.TempDir()
	if err := storegen.History(root, 500); err != nil {
		b.Fatal(err)
	}
	for _, read := range []string{"manifests", "listing"} {
		b.Run("read="+read, func(b *testing.B) {
			op := func() any {
				if read == "manifests" {
					var ms []store.Manifest
					l, _ := os.ReadDir(root)
					for _, e := range l {
						m, err := store.ReadManifest(filepath.Join(root, e.Name()))
						if err != nil {
							b.Fatal(err)
						}
						ms = append(ms, m)
					}
					return ms
				}
				l, err := store.List(root)
				if err != nil || len(l) != 500 {
					b.Fatalf("%d listed, %v", len(l), err)
				}
				return l
			}
			storegen.Bench(b, op)
		})
	}
}
