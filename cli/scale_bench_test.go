package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/headroom-eval/headroom/store/storegen"
)

// Commands and console loads on generated experiments of realistic size
// (storegen.Realistic: records with their output tails, compacted
// traces); storegen.Sizes says which sizes. Memory: MiB-held is the heap
// the result keeps, MiB-peak-RSS the process's peak while it ran.
// go test -run '^$' -bench Scale -benchmem ./cli

func scaleExperiment(b *testing.B, n int) string {
	b.Helper()
	dir, err := storegen.Cached(storegen.Realistic(n))
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// `headroom report EXP --format markdown|json`, the whole command
// in-process: records, the uncapped trials' traces, statistics, output.
func BenchmarkScaleReport(b *testing.B) {
	for _, n := range storegen.Sizes() {
		for _, format := range []string{"markdown", "json"} {
			for _, read := range []string{"records", "summary"} {
				b.Run(fmt.Sprintf("trials=%d/format=%s/read=%s", n, format, read), func(b *testing.B) {
					if format == "json" && read == "records" { // every whole record, in memory and out
						storegen.SkipWhole(b, n)
					}
					dir := scaleExperiment(b, n)
					op := func() any {
						root := NewRoot(io.Discard, io.Discard)
						root.SetArgs([]string{"report", dir, "--format", format})
						if err := root.Execute(); err != nil {
							b.Fatal(err)
						}
						return nil
					}
					withSummary(dir, read, func() { storegen.Bench(b, op) })
				})
			}
		}
	}
}

// Opening a past experiment from the console's history: the store's
// listing, then the experiment's Load (its plan and records).
func BenchmarkScaleConsoleLoad(b *testing.B) {
	for _, n := range storegen.Sizes() {
		for _, read := range []string{"records", "summary"} {
			b.Run(fmt.Sprintf("trials=%d/read=%s", n, read), func(b *testing.B) {
				dir := scaleExperiment(b, n)
				op := func() any {
					list, err := history(filepath.Dir(dir))()
					if err != nil || len(list) != 1 {
						b.Fatalf("%d experiments, %v", len(list), err)
					}
					plan, results, err := list[0].Load()
					if err != nil || len(results) != n {
						b.Fatalf("%d results, %v", len(results), err)
					}
					return []any{plan, results}
				}
				withSummary(dir, read, func() { storegen.Bench(b, op) })
			})
		}
	}
}

// The console's history of a store a team kept for months: 500
// experiments listed (`headroom report --list` reads the same).
func BenchmarkScaleHistory500(b *testing.B) {
	root := b.TempDir()
	if err := storegen.History(root, 500); err != nil {
		b.Fatal(err)
	}
	op := func() any {
		list, err := history(root)()
		if err != nil || len(list) != 500 {
			b.Fatalf("%d listed, %v", len(list), err)
		}
		return list
	}
	storegen.Bench(b, op)
}

// withSummary runs f with dir's summary trusted (read=summary) or not
// (read=records: the records read as before there was one).
func withSummary(dir, read string, f func()) {
	if read == "records" {
		storegen.WithoutSummary(dir, f)
		return
	}
	f()
}
