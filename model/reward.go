package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseReward reads a verifier's reward file (Harbor's convention):
// reward.txt holds one number; reward.json a map of names to numbers, of
// which "reward" counts if present, else the smallest (every part must
// pass).
func ParseReward(name string, data []byte) (float64, error) {
	m, err := ParseRewards(name, data)
	if err != nil {
		return 0, err
	}
	return ScalarReward(m), nil
}

// ParseRewards reads a reward file as Harbor does: reward.txt's number
// is the "reward" key; reward.json is the whole map.
func ParseRewards(name string, data []byte) (map[string]float64, error) {
	text := strings.TrimSpace(string(data))
	if text == "" {
		return nil, fmt.Errorf("is empty")
	}
	if strings.HasSuffix(name, ".json") {
		var m map[string]float64
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("is not a JSON object of numbers: %v", err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("holds no reward")
		}
		return m, nil
	}
	r, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return nil, fmt.Errorf("is not a number: %q", firstLine(text))
	}
	return map[string]float64{"reward": r}, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
