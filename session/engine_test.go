package session

import "testing"

// The build's last output, in a failed build's reason, is what the
// Dockerfile's commands printed: headroom's own lines about the build's
// builder and bounds were most of it ("last build output: builder:
// classic (bounded: …) | build of T: no network … | building", the new
// user of 2026-12-06).
func TestBuildChatterIsNotTheBuildsOutput(t *testing.T) {
	for line, chatter := range map[string]bool{
		"builder: classic (bounded: only the classic builder gives …)":    true,
		"build of nu/bad: no network (the task has none); memory at most": true,
		"Step 2/5 : RUN make": true,
		"building":            false,
		"build of nu/other: printed by the Dockerfile":     false,
		"E: Unable to locate package python3-definitelyno": false,
	} {
		if got := buildChatter("nu/bad", line); got != chatter {
			t.Errorf("buildChatter(%q) = %v, want %v", line, got, chatter)
		}
	}
}
