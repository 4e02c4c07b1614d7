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
	// A size too large for 64 bits comes back from the conversion as a
	// negative number: only a leading minus makes one really negative.
	if n == 0 || strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("size %q must be more than zero", s)
	}
	if n < 0 || n > MaxBytes {
		return 0, fmt.Errorf("size %q is too large: the most is %s", s, FormatBytes(MaxBytes))
	}
	return n, nil
}

// MaxBytes is the largest memory size accepted (1 PiB, far beyond any
// host; larger numbers are typing mistakes or overflow).
const MaxBytes int64 = 1 << 50

// FormatBytes prints a byte count in binary units ("128MiB", "1.5GiB").
func FormatBytes(n int64) string {
	if n < 0 {
		return "-"
	}
	return units.BytesSize(float64(n))
}

// MiB is one mebibyte in bytes.
const MiB int64 = 1 << 20
