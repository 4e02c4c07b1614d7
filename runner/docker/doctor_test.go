package docker

import (
	"context"
	"testing"
	"time"
)

// doctor on a working engine with its workload image passes every check
// it makes (a warning or a note is no failure): its limits read back as
// the ones a driven trial gets, the ratio's and the driver's own.
func TestDoctorPassesOnThisEngine(t *testing.T) {
	needEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	saw := false
	for _, c := range p.Doctor(ctx, testBinary) {
		if !c.OK {
			t.Errorf("doctor: %s: %s (fix: %s)", c.Name, c.Info, c.Fix)
		}
		saw = saw || c.Name == "limits applied"
	}
	if !saw {
		t.Error("doctor made no container check (its workload image is not this test's?)")
	}
}
