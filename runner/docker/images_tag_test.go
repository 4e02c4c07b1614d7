package docker

import (
	"os"
	"path/filepath"
	"testing"
)

// A binary's tag is remembered, and two binaries used in turn each keep
// theirs: the second's does not evict the first's. (A tag not remembered
// costs every start a hash of the 35 MB binary.)
func TestWorkloadTagRemembersEachBinary(t *testing.T) {
	cacheDir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cacheDir)
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("binary a"), 0o755)
	os.WriteFile(b, []byte("binary b"), 0o755)
	ta, err := WorkloadTag(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := WorkloadTag(b)
	if ta == tb {
		t.Fatalf("two binaries, one tag %s", ta)
	}
	// Only what is remembered can answer for a now: its content changes
	// under the same identity (size and time put back), so a fresh hash
	// would give another tag.
	st, _ := os.Stat(a)
	os.WriteFile(a, []byte("binary A"), 0o755)
	os.Chtimes(a, st.ModTime(), st.ModTime())
	if again, _ := WorkloadTag(a); again != ta {
		files, _ := filepath.Glob(filepath.Join(cacheDir, "*", "*"))
		t.Errorf("a's tag was not remembered after b's: %s, then %s (remembered: %v)", ta, again, files)
	}
}
