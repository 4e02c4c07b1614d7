package workload

import (
	"bytes"
	"strings"
	"testing"
)

// --intensity nan was neither <= 0 nor > 1, so a neighbour ran with a
// NaN share of a core; it and ±Inf are refused like 0 and 2.
func TestNeighbourRefusesIntensityOutOfRange(t *testing.T) {
	for _, v := range []string{"0", "2", "nan", "NaN", "inf", "-inf"} {
		var out, errb bytes.Buffer
		if code := neighbour([]string{"--intensity", v}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--intensity must be in (0, 1]") {
			t.Errorf("--intensity %s: exit %d, %q; want 2 and the range", v, code, errb.String())
		}
	}
}
