package runner

import "testing"

func TestKillCountMergesSources(t *testing.T) {
	var k KillCount
	steps := []struct {
		largest int
		named   bool
		want    int
		ok      bool
	}{
		{0, false, 0, false}, // nothing yet
		{0, true, 0, false},  // a name with no kill counted: nothing to pass on
		{1, false, 1, true},  // the engine's event: the first kill
		{1, false, 1, false}, // the cgroup's counter: the same kill
		{1, true, 1, true},   // the kernel's log: the same kill, now named
		{2, true, 2, true},   // a second kill
		{1, false, 2, false}, // a slower source still at one
	}
	for i, s := range steps {
		got, ok := k.Seen(s.largest, s.named)
		if got != s.want || ok != s.ok {
			t.Errorf("step %d Seen(%d, %v) = %d, %v; want %d, %v", i, s.largest, s.named, got, ok, s.want, s.ok)
		}
	}
	if k.Count() != 2 {
		t.Errorf("count %d", k.Count())
	}
}
