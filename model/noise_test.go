package model

import (
	"strings"
	"testing"
)

// Swap on the host is a warning (Harbor's containers could use it,
// headroom's cannot); none is fine.
func TestHostSwap(t *testing.T) {
	if warn, text := HostSwap(0); warn || !strings.Contains(text, "none") {
		t.Errorf("no swap: %v %q", warn, text)
	}
	if warn, text := HostSwap(2 << 30); !warn || !strings.Contains(text, "2GiB of swap") || !strings.Contains(text, "Harbor") {
		t.Errorf("2 GiB of swap: %v %q", warn, text)
	}
}
