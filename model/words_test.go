package model

import "testing"

func TestQuantity(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "repeat", "1 repeat"}, {3, "repeat", "3 repeats"}, {0, "trial", "0 trials"}, {1, "trial", "1 trial"},
		{2, "sandbox", "2 sandboxes"}, {1, "sandbox", "1 sandbox"}, {2, "process", "2 processes"},
		{2, "dependency", "2 dependencies"}, {2, "key", "2 keys"}, {2, "task file", "2 task files"}, {1, "task file", "1 task file"},
	} {
		if got := Quantity(c.n, c.noun); got != c.want {
			t.Errorf("Quantity(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

// Every size at one precision: exact sizes whole, measurements with one
// decimal — a report put 9.744GiB (four significant digits) beside
// 21.83GiB.
func TestFormatBytesOnePrecision(t *testing.T) {
	const gib = 1 << 30
	of := func(x float64, unit int64) int64 { return int64(x * float64(unit)) }
	for n, want := range map[int64]string{
		128 * MiB: "128MiB", 2 * gib: "2GiB", 512: "512B", 0: "0B", -1: "-",
		of(9.744, gib): "9.7GiB", of(21.83, gib): "21.8GiB", of(42.04, MiB): "42.0MiB",
		of(115.9, MiB): "115.9MiB", 1024*1024 - 10: "1.0MiB", 64*1024 + 1: "64.0KiB",
	} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
