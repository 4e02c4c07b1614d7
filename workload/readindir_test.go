package workload

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// verifierDir makes a verifier's directory as the tenth attacker left it,
// beside a file outside it: real.txt saying 1, links to it of each kind,
// and a reward of a 1 followed by 2 MB of newlines.
func verifierDir(t *testing.T) (root, dir string) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, "logs", "verifier")
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(dir, "real.txt"):        "1\n",
		filepath.Join(dir, "sub", "deep.txt"): "0.5\n",
		filepath.Join(root, "outside.txt"):    "1\n",
		filepath.Join(dir, "big.txt"):         "1" + strings.Repeat("\n", 2_000_000),
		filepath.Join(dir, "huge.txt"):        strings.Repeat(" ", int(model.MaxRewardFileBytes)+1),
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"beside.txt":   "real.txt",
		"chain.txt":    "beside.txt",
		"dotted.txt":   "sub/../real.txt",
		"down.txt":     "sub/deep.txt",
		"sublink":      "sub",
		"viasub.txt":   "sublink/deep.txt",
		"absolute.txt": filepath.Join(dir, "real.txt"),
		"escape.txt":   "../../outside.txt",
		"proc.txt":     strings.Repeat("../", strings.Count(dir, "/")) + "proc/1/environ",
		"loop.txt":     "loop.txt",
		"dangling.txt": "nothing.txt",
		"todir.txt":    "sub",
		"updown.txt":   "../verifier/real.txt",
		"sub/up.txt":   "../real.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, dir
}

// A reward file is read as Harbor reads the bind mount's file (Python's
// read_text, following links, no bound), within what is safe for PID 1:
// a relative link, hop by hop, to a regular file in the same directory
// is followed; one that is absolute, leaves the directory (even to come
// back), loops or ends at what is not a regular file is refused; a file
// of 2 MB (a 1 and newlines) is read whole; one past
// model.MaxRewardFileBytes is refused. The driver's OpRead and the walk
// used where openat2 is missing agree.
func TestReadFollowsLinksOnlyInsideItsDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the driver's file operations need root")
	}
	_, dir := verifierDir(t)
	for name, want := range map[string]struct {
		code int
		data string
	}{
		"real.txt":     {0, "1\n"},
		"beside.txt":   {0, "1\n"},
		"chain.txt":    {0, "1\n"},
		"dotted.txt":   {0, "1\n"},
		"down.txt":     {0, "0.5\n"},
		"viasub.txt":   {0, "0.5\n"},
		"sub/up.txt":   {DriverLink, ""}, // its directory is sub
		"big.txt":      {0, "1" + strings.Repeat("\n", 2_000_000)},
		"absolute.txt": {DriverLink, ""},
		"escape.txt":   {DriverLink, ""},
		"proc.txt":     {DriverLink, ""},
		"updown.txt":   {DriverLink, ""},
		"loop.txt":     {DriverLink, ""},
		"dangling.txt": {DriverNoFile, ""},
		"todir.txt":    {DriverNotRegular, ""},
		"huge.txt":     {DriverTooLarge, ""},
	} {
		p := filepath.Join(dir, name)
		var stdout, stderr bytes.Buffer
		code := fileOp(Command{Op: OpRead, Argv: []string{p}, End: "<e>"}, &stdout, &stderr)
		if code != want.code {
			t.Errorf("OpRead %s: exit %d (%s), want %d", name, code, strings.TrimSpace(stderr.String()), want.code)
			continue
		}
		if code != 0 {
			continue
		}
		var got []byte
		for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			if len(line) > ReadLineBytes {
				t.Errorf("OpRead %s: a line of %d bytes, more than the %d the driver sends", name, len(line), ReadLineBytes)
			}
			b, err := base64.StdEncoding.DecodeString(line)
			if err != nil {
				t.Fatalf("OpRead %s: %v", name, err)
			}
			got = append(got, b...)
		}
		if string(got) != want.data {
			t.Errorf("OpRead %s: %d bytes, want %d", name, len(got), len(want.data))
		}
	}
}

// The walk used where openat2 is missing (ResolveInDir, then each
// component opened without following) follows and refuses the same links
// as openat2's RESOLVE_BENEATH.
func TestOpenInDirWalksAsOpenat2(t *testing.T) {
	_, dir := verifierDir(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"sub/up.txt", "sub/deep.txt", "missing.txt", "../linkdir/real.txt", "../linkdir/sub/deep.txt", "real.txt/x",
		// Through /proc/self, a link, and its root, a magic one.
		strings.Repeat("../", strings.Count(dir, "/")) + "proc/self/root" + dir + "/real.txt"}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if err := os.Symlink(dir, filepath.Join(filepath.Dir(dir), "linkdir")); err != nil {
		t.Fatal(err)
	}
	class := func(err error) string {
		for _, c := range []error{ErrLink, ErrNotRegular, os.ErrNotExist} {
			if errors.Is(err, c) {
				return c.Error()
			}
		}
		if err != nil {
			return "other: " + err.Error()
		}
		return "read"
	}
	for _, name := range names {
		p := filepath.Join(dir, name)
		a, errA := openInDir(p, false)
		b, errB := openInDir(p, true)
		var dataA, dataB []byte
		if a != nil {
			dataA, _ = io.ReadAll(a)
			a.Close()
		}
		if b != nil {
			dataB, _ = io.ReadAll(b)
			b.Close()
		}
		if (strings.Contains(name, "linkdir") || strings.Contains(name, "proc/self")) && !errors.Is(errA, ErrLink) {
			t.Errorf("%s, its directory a link: %v, want ErrLink", name, errA)
		}
		if class(errA) != class(errB) || !bytes.Equal(dataA, dataB) {
			t.Errorf("%s: openat2 %s (%d bytes), the walk %s (%d bytes)", name, class(errA), len(dataA), class(errB), len(dataB))
		}
	}
}
