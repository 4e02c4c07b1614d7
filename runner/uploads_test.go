package runner

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// What is copied in keeps its times, directories too, as `docker cp`
// keeps them: a directory was dated 1970 (the eleventh attacker's 17),
// where a task whose tests compare times (make, a build cache) sees the
// harness's dates. A directory headroom makes (a parent) is dated now.
func TestUploadsKeepTheirTimes(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tests")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, p := range []string{filepath.Join(src, "sub", "a.txt"), filepath.Join(src, "sub"), src} {
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := WriteUploads(&buf, []model.Upload{{From: src, To: "/deep/tests"}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	tr := tar.NewReader(&buf)
	seen := map[string]time.Time{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[h.Name] = h.ModTime
	}
	for name, want := range map[string]time.Time{"deep/tests/": then, "deep/tests/sub/": then, "deep/tests/sub/a.txt": then} {
		if got := seen[name]; !got.Equal(want) {
			t.Errorf("%s dated %v, want %v", name, got, want)
		}
	}
	if got := seen["deep/"]; got.Before(start) {
		t.Errorf("the parent headroom made dated %v, want now", got)
	}
}
