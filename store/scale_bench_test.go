package store_test

import (
	"fmt"
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

// report gives the memory figures of one more run of op.
func report(b *testing.B, op func() any) {
	b.StopTimer()
	held, peak := storegen.Measure(op)
	b.ReportMetric(held, "MiB-held")
	b.ReportMetric(peak, "MiB-peak-RSS")
}

// Resume's scan: the manifest and every record, indexed by trial id
// (what session.Resume reads before it plans the missing trials).
// go test -run '^$' -bench Scale -benchmem ./store
func BenchmarkScaleResumeScan(b *testing.B) {
	for _, n := range storegen.Sizes() {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			dir := scaleDir(b, n)
			op := func() any {
				if _, err := store.ReadManifest(dir); err != nil {
					b.Fatal(err)
				}
				rs, _, err := store.ReadTrials(dir)
				if err != nil || len(rs) != n {
					b.Fatalf("%d records, %v", len(rs), err)
				}
				recorded := make(map[string]model.TrialResult, len(rs))
				for _, r := range rs {
					recorded[r.ID] = r
				}
				return recorded
			}
			b.ReportAllocs()
			for b.Loop() {
				op()
			}
			report(b, op)
		})
	}
}

// The history screen's listing: 500 experiments' manifests.
func BenchmarkScaleList500(b *testing.B) {
	root := b.TempDir()
	if err := storegen.History(root, 500); err != nil {
		b.Fatal(err)
	}
	op := func() any {
		l, err := store.List(root)
		if err != nil || len(l) != 500 {
			b.Fatalf("%d listed, %v", len(l), err)
		}
		return l
	}
	b.ReportAllocs()
	for b.Loop() {
		op()
	}
	report(b, op)
}
