package wire

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestProfileValidation(t *testing.T) {
	bad := []Profile{
		{DurationMS: -1},
		{BaseMB: -5},
		{Children: 100},
		{JitterPct: 100},
		{SpikeChance: 2},
		{OnChildKilled: "explode"},
		{Style: "cobol"},
		{BaseMB: 1 << 20},
		{CPUWorkMS: -1},
		{CPUWorkMS: 10, CPUThreads: 65},
		{DeadlineMS: 100},              // a deadline for no work
		{SpikeMB: 40},                  // a spike that never comes: no spike_every_ms, no spike_chance
		{SpikeMB: 40, SpikeEvery: 500}, // nor with no chance
	}
	for _, p := range bad {
		if p.Validate() == nil {
			t.Errorf("%+v accepted", p)
		}
		if _, err := p.Argv("s"); err == nil {
			t.Errorf("Argv of %+v accepted", p)
		}
	}
	argv, err := Profile{Style: "pip", DurationMS: 5}.Argv("install")
	if err != nil || argv[0] != Binary || argv[3] != "install" {
		t.Fatalf("argv %v %v", argv, err)
	}
	var back Profile
	if err := json.Unmarshal([]byte(argv[5]), &back); err != nil || back.Style != "pip" {
		t.Errorf("profile does not round-trip: %v %+v", err, back)
	}
}

func FuzzProfileJSON(f *testing.F) {
	f.Add(`{"style":"pip","packages":["pandas"],"duration_ms":10,"base_mb":1}`)
	f.Add(`{"children":64,"child_mb":1000}`)
	f.Add(`{"on_child_killed":"retry","jitter_pct":99.9}`)
	f.Fuzz(func(t *testing.T, s string) {
		var p Profile
		if json.Unmarshal([]byte(s), &p) != nil {
			return
		}
		if p.Validate() == nil {
			if _, err := p.Argv("s"); err != nil {
				t.Fatalf("valid profile %+v has no argv: %v", p, err)
			}
		}
	})
}

// Every float field refuses NaN and ±Inf by its name: TOML reads
// base_mb = nan as a number, NaN passed every range check (neither < 0
// nor > 1), and only the JSON encoder refused it, naming no field.
func TestProfileRefusesNonFiniteNumbers(t *testing.T) {
	typ := reflect.TypeOf(Profile{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Float64 {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			var p Profile
			reflect.ValueOf(&p).Elem().Field(i).SetFloat(v)
			err := p.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), name+" must be a finite number") {
				t.Errorf("%s = %v: %v, want it refused by name", name, v, err)
			}
		}
	}
}
