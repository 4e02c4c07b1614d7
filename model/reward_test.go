package model

import (
	"strings"
	"testing"
)

func TestParseReward(t *testing.T) {
	cases := []struct {
		name, data string
		want       float64
		err        string
	}{
		{"reward.txt", "1\n", 1, ""},
		{"reward.txt", " 0.25 ", 0.25, ""},
		{"reward.txt", "1e0", 1, ""},
		{"reward.txt", "", 0, "is empty"},
		{"reward.txt", "NaN", 0, "not a number"},
		{"reward.txt", "inf", 0, "not a number"},
		{"reward.txt", "1\n2\n", 0, "not a number"},
		{"reward.json", `{"reward": 0.5}`, 0.5, ""},
		{"reward.json", `{"tests": 1, "lint": 0}`, 0, ""},
		{"reward.json", `{"b": 0.75, "a": 0.5}`, 0.5, ""},
		{"reward.json", `{}`, 0, "holds no reward"},
		{"reward.json", `[1]`, 0, "not a JSON object"},
		{"reward.json", `{"reward": "1"}`, 0, "not a JSON object"},
	}
	for _, c := range cases {
		got, err := ParseReward(c.name, []byte(c.data))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %q: err %v, want %q", c.name, c.data, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s %q = %v, %v; want %v", c.name, c.data, got, err, c.want)
		}
	}
}

func FuzzParseReward(f *testing.F) {
	f.Add(false, []byte("1.0"))
	f.Add(true, []byte(`{"reward": 1}`))
	f.Fuzz(func(t *testing.T, json bool, data []byte) {
		name := "reward.txt"
		if json {
			name = "reward.json"
		}
		r, err := ParseReward(name, data)
		if err == nil && (r != r) {
			t.Fatalf("NaN reward accepted from %q", data)
		}
	})
}
