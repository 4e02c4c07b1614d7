package model

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestRecordedRewardsAreBounded(t *testing.T) {
	var v struct {
		Rewards RecordedRewards `json:"rewards"`
	}
	if err := json.Unmarshal([]byte(`{"rewards": {"reward": 1, "tests": 0.5}}`), &v); err != nil || v.Rewards["reward"] != 1 || len(v.Rewards) != 2 {
		t.Errorf("two rewards: %v %v", v.Rewards, err)
	}
	v.Rewards = nil
	if err := json.Unmarshal([]byte(`{"rewards": null}`), &v); err != nil || v.Rewards != nil {
		t.Errorf("null: %v %v", v.Rewards, err)
	}
	var b strings.Builder
	b.WriteString(`{"rewards": {`)
	for i := range MaxRewardKeys + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	b.WriteString(`}}`)
	if err := json.Unmarshal([]byte(b.String()), &v); err == nil || !strings.Contains(err.Error(), "more than 100000 keys") {
		t.Errorf("%d keys: %v", MaxRewardKeys+1, err)
	}
}
