package model

import (
	"math"
	"testing"
)

// Values summed exactly over the hypergeometric tables (Python fractions).
func TestFisherExact(t *testing.T) {
	tests := []struct {
		k1, n1, k2, n2 int
		want           float64
	}{
		{3, 10, 9, 10, 0.019767},
		{0, 5, 5, 5, 0.0079365},
		{1, 2, 1, 2, 1}, // identical
		{10, 20, 12, 20, 0.75119},
		{0, 30, 0, 30, 1}, // no successes at all
	}
	for _, tt := range tests {
		if got := FisherExact(tt.k1, tt.n1, tt.k2, tt.n2); math.Abs(got-tt.want) > 5e-4*math.Max(tt.want, 1e-3)+1e-5 {
			t.Errorf("FisherExact(%d/%d vs %d/%d) = %.5g, want %.5g", tt.k1, tt.n1, tt.k2, tt.n2, got, tt.want)
		}
	}
	if FisherExact(1, 0, 1, 2) != 1 {
		t.Error("an empty pool is no evidence")
	}
}
