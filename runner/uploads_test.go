package runner

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
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
	seen := map[string]time.Time{}
	for name, h := range tarHeaders(t, &buf) {
		seen[name] = h.ModTime
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

// A directory copied in keeps its setgid and sticky bits, as `docker cp`
// keeps them (tar.FileInfoHeader's mode): a task's 1777 scratch
// directory arrived 0777 (the twelfth attacker's 8).
func TestUploadsKeepSpecialModeBits(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tests")
	for _, d := range []string{"scratch", "shared"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "scratch"), 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "shared"), 0o775|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteUploads(&buf, []model.Upload{{From: src, To: "/tests"}}); err != nil {
		t.Fatal(err)
	}
	modes := map[string]int64{}
	for name, h := range tarHeaders(t, &buf) {
		modes[name] = h.Mode
	}
	for name, want := range map[string]int64{"tests/scratch/": 0o1777, "tests/shared/": 0o2775} {
		if got := modes[name]; got != want {
			t.Errorf("%s mode %o, want %o", name, got, want)
		}
	}
}

// tarHeaders are a tar stream's headers by name.
func tarHeaders(t *testing.T, r io.Reader) map[string]*tar.Header {
	t.Helper()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

// A link upload is a symbolic link entry in the archive, its target as
// given, never made or followed on the host: a separate verifier's
// artifacts keep the agent's links (the twenty-ninth attacker's 2).
func TestALinkUploadIsALinkInTheArchive(t *testing.T) {
	var buf bytes.Buffer
	up := []model.Upload{{To: "/logs/artifacts/d", Name: "host", Link: "/etc/hostname"}}
	if err := WriteUploads(&buf, up); err != nil {
		t.Fatal(err)
	}
	hs := tarHeaders(t, &buf)
	h, ok := hs["logs/artifacts/d/host"]
	if !ok || h.Typeflag != tar.TypeSymlink || h.Linkname != "/etc/hostname" || h.Size != 0 {
		t.Fatalf("entries %v; want logs/artifacts/d/host a symbolic link to /etc/hostname", hs)
	}
	if _, ok := hs["logs/artifacts/d/"]; !ok {
		t.Errorf("entries %v; want the link's directory made", hs)
	}
}

// A path put in place as a link since the task was loaded is refused as
// the task's files changed, not sent: the refusal was recorded as "the
// engine went away" (the thirtieth attacker's 3).
func TestALinkInPlaceOfAnUploadIsAChangedTask(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "tests")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	err := WriteUploads(io.Discard, []model.Upload{{From: link, To: "/tests"}})
	if !errors.Is(err, ErrTaskFilesChanged) || !headroomsOwn(err) {
		t.Errorf("%v; want ErrTaskFilesChanged, headroom's own", err)
	}
}

// A FIFO made among a step's files since the task was loaded is an
// error of the task's files, not left out: a solve.sh made a FIFO was
// "No such file or directory" in the trial (the thirty-fourth
// attacker's 6).
func TestAFIFOInAnUploadIsRefused(t *testing.T) {
	src := filepath.Join(t.TempDir(), "solution")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "solve.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteUploads(io.Discard, []model.Upload{{From: src, To: "/solution"}})
	if !errors.Is(err, ErrTaskFilesChanged) {
		t.Errorf("a FIFO in solution/: %v, want the task's files changed", err)
	}
	// A single file's upload replaced by one (a review's).
	err = WriteUploads(io.Discard, []model.Upload{{From: filepath.Join(src, "solve.sh"), To: "/solution"}})
	if !errors.Is(err, ErrTaskFilesChanged) {
		t.Errorf("a FIFO as a single file's upload: %v, want the task's files changed", err)
	}
}
