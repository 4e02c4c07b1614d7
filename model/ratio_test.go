package model

import (
	"strings"
	"testing"
)

func TestParseRatio(t *testing.T) {
	tests := []struct {
		in      string
		want    Ratio
		wantErr string
	}{
		{"1", Ratio{K: 1}, ""},
		{"1x", Ratio{K: 1}, ""},
		{"1.5x", Ratio{K: 1.5}, ""},
		{" 2.5X ", Ratio{K: 2.5}, ""},
		{"3", Ratio{K: 3}, ""},
		{"uncapped", Uncapped, ""},
		{"Unlimited", Uncapped, ""},
		{"none", Uncapped, ""},
		// Infinite multiples are refused alike, pointing to "uncapped"
		// ("Inf" used to mean uncapped while 1e309 was "not a multiple").
		{"Inf", Ratio{}, `above 1000x: use "uncapped"`},
		{"+inf", Ratio{}, `above 1000x: use "uncapped"`},
		{"1e309", Ratio{}, `above 1000x: use "uncapped"`},
		{"1e309x", Ratio{}, `above 1000x: use "uncapped"`},
		{"-Inf", Ratio{}, "below 1x"},
		{"∞", Ratio{}, "not a multiple"},
		{"0x", Ratio{}, "below 1x"},
		{"0.5x", Ratio{}, "below 1x"},
		{"-2", Ratio{}, "below 1x"},
		{"abc", Ratio{}, "not a multiple"},
		{"", Ratio{}, "empty ratio"},
		{"x", Ratio{}, "not a multiple"},
		{"NaN", Ratio{}, "not a multiple"},
		{"1e9", Ratio{}, "above 1000x"},
		{"2xx", Ratio{}, "not a multiple"},
	}
	for _, tt := range tests {
		got, err := ParseRatio(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRatio(%q) error = %v, want it to mention %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRatio(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestRatioStringRoundTrips(t *testing.T) {
	for _, r := range append(StandardRatios, Ratio{K: 2.5}, Ratio{K: 1.125}) {
		back, err := ParseRatio(r.String())
		if err != nil || back != r {
			t.Errorf("%v → %q → %v, %v", r, r.String(), back, err)
		}
	}
}

func TestParseRatiosRejectsDuplicatesAndEmpty(t *testing.T) {
	if _, err := ParseRatios("1,1x"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := ParseRatios(" , "); err == nil {
		t.Error("empty list accepted")
	}
	rs, err := ParseRatios("1,1.5,2,3,5,uncapped")
	if err != nil || len(rs) != 6 || !rs[5].Uncapped {
		t.Errorf("standard list: %v %v", rs, err)
	}
}

func TestRatioOrder(t *testing.T) {
	if !(Ratio{K: 1}).Less(Ratio{K: 1.5}) || !(Ratio{K: 5}).Less(Uncapped) || Uncapped.Less(Ratio{K: 1000}) {
		t.Error("ratios must order from tightest to uncapped")
	}
}

func FuzzParseRatio(f *testing.F) {
	for _, s := range []string{"1", "1.5x", "uncapped", "0x", "abc", "1e308", "-0", "∞", "2.0000001x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRatio(s)
		if err != nil {
			return
		}
		if !r.Uncapped && (r.K < 1 || r.K > MaxRatio) {
			t.Fatalf("ParseRatio(%q) accepted %v", s, r.K)
		}
		back, err := ParseRatio(r.String())
		if err != nil || back != r {
			t.Fatalf("round trip of %q: %v → %q → %v, %v", s, r, r.String(), back, err)
		}
	})
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"2G", "512m", "1.5GiB", "0", "-1G", "abc", "9999999999999999T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil && n <= 0 {
			t.Fatalf("ParseBytes(%q) = %d without error", s, n)
		}
	})
}

// Overflowing sizes say they are too large (they said "must be more than
// zero": the conversion wraps to a negative number).
func TestParseBytesMessages(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		err  string
	}{
		{"2G", 2 << 30, ""},
		{"1PiB", 1 << 50, ""},
		{"0", 0, "must be more than zero"},
		{"-1G", 0, "not a memory size"},
		{"99999999999999999999G", 0, "is too large: the most is 1PiB"},
		{"1e30G", 0, "is too large: the most is 1PiB"},
		{"2P", 0, "is too large: the most is 1PiB"},
	} {
		n, err := ParseBytes(tt.in)
		if tt.err == "" {
			if err != nil || n != tt.want {
				t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.in, n, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseBytes(%q) error %v, want %q", tt.in, err, tt.err)
		}
	}
}

// A named configuration (an imported job's absolute override) reads and
// writes back as config:NAME and sorts after every multiple.
func TestNamedConfigurationRatio(t *testing.T) {
	r, err := ParseRatio("config:4cpu-16g")
	if err != nil || r.Name != "4cpu-16g" || r.String() != "config:4cpu-16g" {
		t.Fatalf("%v %v", r, err)
	}
	var back Ratio
	if err := back.UnmarshalText([]byte(r.String())); err != nil || back != r {
		t.Errorf("round trip %v %v", back, err)
	}
	if !Uncapped.Less(r) || r.Less(Ratio{K: 5}) {
		t.Errorf("a named configuration must sort after uncapped")
	}
	if _, err := ParseRatio("config:"); err == nil {
		t.Errorf("an empty name was accepted")
	}
}

// Whatever a --noise, --detect or --target flag holds, a share read is in
// [0, 1] (1e400, NaN% and -1 are refused). It lived in cli; here, its
// fuzzing builds this small package, not the whole console's.
func FuzzParsePP(f *testing.F) {
	for _, s := range []string{"3pp", "3%", "0.03", "-1", "1e400", "NaN%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParsePP(s)
		if err == nil && (x < 0 || x > 1 || x != x) {
			t.Fatalf("ParsePP(%q) = %v", s, x)
		}
	})
}
