package model

import (
	"fmt"
	"strings"

	units "github.com/docker/go-units"
)

// ParseBytes reads a memory size the way Docker and Terminal-Bench write it:
// "2G", "512m", "1.5GiB", "2048MB" (binary multiples, as Docker uses).
// A bare number is bytes.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty size: write it like \"512M\" or \"2G\"")
	}
	n, err := units.RAMInBytes(s)
	if err != nil {
		return 0, fmt.Errorf("size %q is not a memory size: write it like \"512M\" or \"2G\"", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("size %q must be more than zero", s)
	}
	return n, nil
}

// FormatBytes prints a byte count in binary units ("128MiB", "1.5GiB").
func FormatBytes(n int64) string {
	if n < 0 {
		return "-"
	}
	return units.BytesSize(float64(n))
}

// MiB is one mebibyte in bytes.
const MiB int64 = 1 << 20
