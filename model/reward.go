package model

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ParseReward reads a verifier's reward file (Harbor's convention):
// reward.txt holds one number; reward.json a map of names to numbers, of
// which "reward" counts if present, else the smallest (every part must
// pass).
func ParseReward(name string, data []byte) (float64, error) {
	text := strings.TrimSpace(string(data))
	if text == "" {
		return 0, fmt.Errorf("is empty")
	}
	if strings.HasSuffix(name, ".json") {
		var m map[string]float64
		if err := json.Unmarshal(data, &m); err != nil {
			return 0, fmt.Errorf("is not a JSON object of numbers: %v", err)
		}
		if len(m) == 0 {
			return 0, fmt.Errorf("holds no reward")
		}
		if r, ok := m["reward"]; ok {
			return r, nil
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		r := math.Inf(1)
		for _, k := range keys {
			r = math.Min(r, m[k])
		}
		return r, nil
	}
	r, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("is not a number: %q", firstLine(text))
	}
	return r, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
