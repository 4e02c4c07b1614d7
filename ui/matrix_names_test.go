package ui

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// An opened experiment's records may be imported or edited: task "x"
// with agent "a · b" and task "x · a" with agent "b" must not label two
// rows alike.
func TestRowLabelsKeepTheSeparatorTheirOwn(t *testing.T) {
	a := shortName(model.RowKey{Task: "x", Agent: "a · b"})
	b := shortName(model.RowKey{Task: "x · a", Agent: "b"})
	if a == b {
		t.Errorf("both rows read %q", a)
	}
}
