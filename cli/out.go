package cli

import (
	"os"
)

// checkOut makes sure experiments can be written under root before
// anything slow starts: a bad --out was reported only after every task
// image had been built.
func checkOut(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return usagef("--out %s: %v: name a directory headroom can create and write to", root, err)
	}
	f, err := os.CreateTemp(root, ".headroom-write-check-*")
	if err != nil {
		return usagef("--out %s: %v: name a directory headroom can write to", root, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
