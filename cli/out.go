package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// checkOut makes sure experiments can be written under root before
// anything slow starts: a bad --out was reported only after every task
// image had been built. What it had to create to check is removed again:
// a run refused later leaves no directory behind.
func checkOut(root string) error {
	created := firstMissing(root)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return usagef("--out %s: %v: name a directory headroom can create and write to", root, err)
	}
	defer func() {
		if created != "" {
			// Only directories left empty: the store makes them again.
			for d := root; ; d = filepath.Dir(d) {
				if os.Remove(d) != nil || d == created {
					break
				}
			}
		}
	}()
	f, err := os.CreateTemp(root, ".headroom-write-check-*")
	if err != nil {
		return usagef("--out %s: %v: name a directory headroom can write to", root, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// firstMissing is the outermost directory of path that does not exist
// ("" when path does).
func firstMissing(path string) string {
	missing := ""
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = p
		if filepath.Dir(p) == p {
			return missing
		}
	}
}
