package model

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// RecordedRewards is another harness's recorded rewards of a trial
// (Harbor's verifier_result.rewards), as import and replay decode them:
// a map of at most MaxRewardKeys keys, refused past it before any map is
// built. Harbor's verifier writes a few; a result.json of 6.1M small keys
// (63 MiB, inside the file bound) had held 450 MB a trial, 1.8 GB for a
// job of four (the thirty-second attacker's 2).
type RecordedRewards map[string]float64

// UnmarshalJSON counts the object's tokens first (a token at a time,
// nothing kept), then decodes it.
func (r *RecordedRewards) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tokens := 0
	for {
		if _, err := dec.Token(); err != nil {
			break
		}
		// An object of n keys is 2n+2 tokens.
		if tokens++; tokens > 2*MaxRewardKeys+2 {
			return fmt.Errorf("rewards: more than %d keys, which no verifier writes: headroom reads at most that many", MaxRewardKeys)
		}
	}
	return json.Unmarshal(b, (*map[string]float64)(r))
}
