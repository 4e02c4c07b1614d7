package model

import (
	"fmt"
	"strconv"
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

// FormatBytes prints a byte count in binary units, every figure at one
// precision: an exact size (a spec, a limit) whole ("128MiB", "2GiB"), a
// measurement with one decimal ("9.7GiB", "21.8GiB", "42.0MiB") — not
// four significant digits, which put "9.744GiB" beside "21.83GiB".
func FormatBytes(n int64) string {
	if n < 0 {
		return "-"
	}
	unit, i := int64(1), 0
	for i < len(byteUnits)-1 && n >= unit*1024 {
		unit *= 1024
		i++
	}
	if n%unit == 0 {
		return strconv.FormatInt(n/unit, 10) + byteUnits[i]
	}
	v := float64(n) / float64(unit)
	if v >= 1023.95 && i < len(byteUnits)-1 {
		// 1023.97KiB would print as 1024.0KiB: say 1.0MiB.
		v, i = v/1024, i+1
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + byteUnits[i]
}

// byteUnits are FormatBytes's binary units.
var byteUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}

// MiB is one mebibyte in bytes.
const MiB int64 = 1 << 20
