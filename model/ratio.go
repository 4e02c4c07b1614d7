package model

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Ratio is the multiple of a task's spec given as the hard kill limit.
// The guarantee is always the spec itself; Uncapped means no hard limit.
//
// A Ratio is also a column of a sweep: when the sweep turns another
// hidden variable (knobs.go), Knobs holds that column's setting. Without
// knobs it is the plain ratio, written as it always was ("1.5x").
type Ratio struct {
	K        float64 // multiple of the spec; ignored when Uncapped
	Uncapped bool
	// Name, when set, is a named resource configuration that is no
	// multiple of the spec (an imported job's absolute override): written
	// "config:NAME", sorted after the multiples.
	Name  string
	Knobs Knobs
}

// ConfigPrefix marks a named configuration in a ratio's text.
const ConfigPrefix = "config:"

// Plain is the ratio without its knobs.
func (r Ratio) Plain() Ratio { return Ratio{K: r.K, Uncapped: r.Uncapped, Name: r.Name} }

// WithKnobs is the ratio's column with the knobs set.
func (r Ratio) WithKnobs(k Knobs) Ratio {
	r.Knobs = k.normal()
	return r
}

// ParseColumn reads a column's text form: a ratio, then its knobs'
// key=value words ("1x latency=200ms").
func ParseColumn(s string) (Ratio, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return ParseRatio(s)
	}
	r, err := ParseRatio(words[0])
	if err != nil {
		return r, err
	}
	for _, w := range words[1:] {
		if err := r.Knobs.ParseKnobField(w); err != nil {
			return r, fmt.Errorf("column %q: %w", s, err)
		}
	}
	r.Knobs = r.Knobs.normal()
	return r, nil
}

// StandardRatios are the configurations of the Terminal-Bench 2.0 study.
var StandardRatios = []Ratio{{K: 1}, {K: 1.5}, {K: 2}, {K: 3}, {K: 5}, {Uncapped: true}}

// Uncapped is the ratio with no hard limit.
var Uncapped = Ratio{Uncapped: true}

// MaxRatio bounds custom ratios; beyond it "uncapped" says what is meant.
const MaxRatio = 1000

// ParseRatio accepts "1", "1x", "1.5x", "2.5X" and "uncapped" (also
// "none", "unlimited"). An infinite multiple ("Inf", or 1e309, which a
// float cannot hold) is refused like any multiple above MaxRatio: no limit
// is written "uncapped".
func ParseRatio(s string) (Ratio, error) {
	if name, ok := strings.CutPrefix(strings.TrimSpace(s), ConfigPrefix); ok {
		if name == "" {
			return Ratio{}, fmt.Errorf("ratio %q names no configuration", s)
		}
		return Ratio{Name: name}, nil
	}
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "uncapped", "none", "unlimited":
		return Uncapped, nil
	case "":
		return Ratio{}, fmt.Errorf("empty ratio: use a multiple like 1x, 1.5x, 3x or \"uncapped\"")
	}
	num := strings.TrimSuffix(t, "x")
	k, err := strconv.ParseFloat(num, 64)
	switch {
	case math.IsInf(k, 1):
		return Ratio{}, fmt.Errorf("ratio %q is above %dx: use \"uncapped\" for no limit", s, MaxRatio)
	case math.IsInf(k, -1):
		k = -1 // below 1x, said below
	case err != nil || math.IsNaN(k):
		return Ratio{}, fmt.Errorf("ratio %q is not a multiple: use 1x, 1.5x, 3x or \"uncapped\"", s)
	}
	if k < 1 {
		return Ratio{}, fmt.Errorf("ratio %q is below 1x: the hard limit cannot be less than the guaranteed spec; use 1x or more", s)
	}
	if k > MaxRatio {
		return Ratio{}, fmt.Errorf("ratio %q is above %dx: use \"uncapped\" for no limit", s, MaxRatio)
	}
	// Keep ratios comparable as map keys: round to 1/1000.
	k = math.Round(k*1000) / 1000
	return Ratio{K: k}, nil
}

// ParseRatios reads a comma-separated list, rejecting duplicates.
func ParseRatios(s string) ([]Ratio, error) {
	var out []Ratio
	seen := map[Ratio]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := ParseRatio(part)
		if err != nil {
			return nil, err
		}
		if seen[r] {
			return nil, fmt.Errorf("ratio %s is listed twice", r)
		}
		seen[r] = true
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ratios given: use e.g. --ratios 1,3,uncapped")
	}
	return out, nil
}

// String prints "1x", "1.5x" or "uncapped", then the column's knobs
// ("1x latency=200ms"); ParseColumn reads it back (ParseRatio, the plain
// ratio).
func (r Ratio) String() string {
	s := r.multiple()
	if k := r.Knobs.String(); k != "" {
		s += " " + k
	}
	return s
}

func (r Ratio) multiple() string {
	if r.Name != "" {
		return ConfigPrefix + r.Name
	}
	if r.Uncapped {
		return "uncapped"
	}
	return strconv.FormatFloat(r.K, 'f', -1, 64) + "x"
}

// Heading is a column's short heading: the ratio, and for a knob's
// column the knob's values alone, e.g. "1x 200ms" (the column group's
// title names the knob).
func (r Ratio) Heading() string {
	if r.Knobs.IsZero() {
		return r.multiple()
	}
	return r.multiple() + " " + r.Knobs.Short()
}

// Less orders columns: the plain ratios first, from tightest to
// uncapped, then each knob's column group (LessKnobs), ratio by ratio.
func (r Ratio) Less(o Ratio) bool {
	if r.Knobs != o.Knobs {
		return LessKnobs(r.Knobs, o.Knobs)
	}
	if (r.Name != "") != (o.Name != "") {
		return r.Name == ""
	}
	if r.Name != "" {
		return r.Name < o.Name
	}
	if r.Uncapped != o.Uncapped {
		return !r.Uncapped
	}
	return r.K < o.K
}

// SortRatios returns the ratios in column order (Less), a sorted copy:
// every screen and the matrix show them the same way, uncapped last.
func SortRatios(rs []Ratio) []Ratio {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b Ratio) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
	return out
}

// MarshalText makes a Ratio a JSON string ("1.5x", "1x latency=200ms").
func (r Ratio) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (r *Ratio) UnmarshalText(b []byte) error {
	v, err := ParseColumn(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// ParsePP reads a share given as percentage points or a fraction: "3pp"
// and "3%" are 0.03, a bare number of 1 or more is points ("3"), under 1
// a fraction ("0.03"). It is within [0, 1] or an error.
func ParsePP(v string) (float64, error) {
	s := strings.TrimSpace(v)
	unit := strings.HasSuffix(s, "pp") || strings.HasSuffix(s, "%")
	t := strings.TrimSuffix(strings.TrimSuffix(s, "pp"), "%")
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > 100 {
		return 0, fmt.Errorf("%q is not percentage points like 3pp or 3%%", v)
	}
	if x >= 1 || unit {
		x /= 100
	}
	return x, nil
}
