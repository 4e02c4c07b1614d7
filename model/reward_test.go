package model

import (
	"math"
	"strings"
	"testing"
)

// rewardCase is one reward file's text and what ParseReward must make
// of it: want, or an error holding err.
type rewardCase struct {
	name, data string
	want       float64
	err        string
}

func checkRewards(t *testing.T, cases []rewardCase) {
	t.Helper()
	for _, c := range cases {
		got, err := ParseReward(c.name, []byte(c.data))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %q: %v, err %v, want %q", c.name, c.data, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s %q = %v, %v; want %v", c.name, c.data, got, err, c.want)
		}
	}
}

func TestParseReward(t *testing.T) {
	checkRewards(t, []rewardCase{
		{"reward.txt", "1\n", 1, ""},
		{"reward.txt", " 0.25 ", 0.25, ""},
		{"reward.txt", "1e0", 1, ""},
		{"reward.txt", "", 0, "is empty"},
		{"reward.txt", "NaN", 0, "is NaN"},
		{"reward.txt", "1\n2\n", 0, "not a number"},
		{"reward.json", `{"reward": 0.5}`, 0.5, ""},
		{"reward.json", `{"tests": 1, "lint": 0}`, 0, ""},
		{"reward.json", `{"b": 0.75, "a": 0.5}`, 0.5, ""},
		{"reward.json", `{}`, 0, "holds no reward"},
		{"reward.json", `[1]`, 0, "not a JSON object"},
		{"reward.json", `{"reward": "1"}`, 1, ""}, // pydantic's lax mode: TestParseRewardAsPython
	})
}

// A reward is read as Harbor reads it, by Python's float() (reward.txt)
// and json.loads (reward.json); each want is what python3 says. An
// infinity is ±math.MaxFloat64 (the same verdict at any finite
// threshold; a record cannot hold an infinity); NaN, which passes no
// threshold, is an error.
func TestParseRewardAsPython(t *testing.T) {
	const big = math.MaxFloat64
	checkRewards(t, []rewardCase{
		{"reward.txt", "0x1p0", 0, "by Python's float()"}, // float(): ValueError
		{"reward.txt", "0x1", 0, "not a number"},
		{"reward.txt", "1_0", 10, ""},
		{"reward.txt", "1__0", 0, "not a number"},
		{"reward.txt", "_1", 0, "not a number"},
		{"reward.txt", "1_", 0, "not a number"},
		{"reward.txt", "1e1_0", 1e10, ""},
		{"reward.txt", " 1.0\n", 1, ""},
		{"reward.txt", "\u20031\u2003", 1, ""},
		{"reward.txt", "inf", big, ""},
		{"reward.txt", "-inf", -big, ""},
		{"reward.txt", "Infinity", big, ""},
		{"reward.txt", "iNfInItY", big, ""},
		{"reward.txt", "1e400", big, ""},
		{"reward.txt", "nan", 0, "is NaN"},
		{"reward.txt", "+nan", 0, "is NaN"},
		{"reward.txt", "1e3", 1000, ""},
		{"reward.txt", "+1", 1, ""},
		{"reward.txt", "1.", 1, ""},
		{"reward.txt", ".5", 0.5, ""},
		{"reward.txt", "\uff11", 1, ""},          // full-width 1
		{"reward.txt", "\u0661.\u0665", 1.5, ""}, // Arabic-Indic 1.5
		{"reward.txt", "\U0001d7d9", 1, ""},      // mathematical double-struck 1
		{"reward.txt", "1\x1c", 0, "not a number"},
		{"reward.json", `{"reward": Infinity}`, big, ""},
		{"reward.json", `{"reward": -Infinity}`, -big, ""},
		{"reward.json", `{"reward": Infinity1}`, 0, "not a JSON object of numbers"},
		{"reward.json", `{"reward": Infinity.5}`, 0, "not a JSON object of numbers"},
		{"reward.json", `{"reward": 1e400}`, big, ""},
		{"reward.json", `{"reward": NaN}`, 0, "NaN"},
		{"reward.json", `{"NaN Infinity \\\" Infinity": 0.5}`, 0.5, ""},
		// Harbor's VerifierResult is a pydantic model (rewards:
		// dict[str, float | int]) in lax mode: a bool is 1 or 0, a string
		// that reads as a number is that number (the eighth attacker:
		// true failed here and passed under Harbor).
		{"reward.json", `{"reward": "Infinity"}`, big, ""},
		{"reward.json", `{"reward": true}`, 1, ""},
		{"reward.json", `{"reward": false}`, 0, ""},
		{"reward.json", `{"reward": " 1 "}`, 1, ""},
		{"reward.json", `{"reward": "yes"}`, 0, "is not a number"},
		// pydantic-core reads a string by Rust's f64 grammar (trimmed),
		// then untrimmed with single inner underscores out: not as
		// Python's float() (a review of round ten).
		{"reward.json", `{"reward": "١"}`, 0, "is not a number"},
		{"reward.json", `{"reward": " 1_0 "}`, 0, "is not a number"},
		{"reward.json", `{"reward": "1_.5"}`, 1.5, ""},
		{"reward.json", `{"reward": "1__0"}`, 0, "is not a number"},
		{"reward.json", `{"reward": "-inf"}`, -big, ""},
		{"reward.json", `{"reward": "0x1p0"}`, 0, "is not a number"},
		{"reward.json", `{"reward": "1e400"}`, big, ""},
		{"reward.json", `{"reward": "nan"}`, 0, "is NaN"},
		{"reward.json", `{"reward": null}`, 0, "not a JSON object of numbers: \"reward\" is null"},
		{"reward.json", `{"reward": [1]}`, 0, "is an array"},
		{"reward.json", `{"reward": 1} {"reward": 0}`, 0, "not a JSON object of numbers"},
		// json.loads: "Extra data" for anything but whitespace after it.
		{"reward.json", "{\"reward\": 1.0}\ngraded 1 check\n", 0, "more after its object"},
		{"reward.json", "{\"reward\": 1} x", 0, "more after its object"},
		{"reward.json", "{\"reward\": 1}\x00", 0, "more after its object"},
		{"reward.json", "{\"reward\": 1} \t\r\n", 1, ""},
		{"reward.json", `{"reward": 1, "reward": 0}`, 0, ""},
	})
}

func FuzzParseReward(f *testing.F) {
	f.Add(false, []byte("1.0"))
	f.Add(true, []byte(`{"reward": 1}`))
	// The strings Python's float() and json.loads read otherwise than
	// Go's ParseFloat and encoding/json (TestParseRewardAsPython).
	for _, s := range []string{"0x1p0", "1_0", " 1.0\n", "inf", "nan", "Infinity", "1e3", "+1", "\uff11", "+nan", "1e400", "1__0"} {
		f.Add(false, []byte(s))
	}
	for _, s := range []string{`{"reward": Infinity}`, `{"reward": -Infinity}`, `{"reward": NaN}`, `{"a\\\"Infinity": 1}`, `{"reward": 1e400}`, `{"reward": "1"}`} {
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, json bool, data []byte) {
		name := "reward.txt"
		if json {
			name = "reward.json"
		}
		r, err := ParseReward(name, data)
		if err == nil && (math.IsNaN(r) || math.IsInf(r, 0)) {
			t.Fatalf("reward %v from %q: a record cannot hold it", r, data)
		}
	})
}
