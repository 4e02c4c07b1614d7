package cli

import (
	"testing"

	"github.com/headroom-eval/headroom/store"
)

func TestParsePP(t *testing.T) {
	for in, want := range map[string]float64{"3pp": 0.03, "3%": 0.03, "3": 0.03, "0.03": 0.03, "1%": 0.01, "0pp": 0, "100%": 1, " 2.5pp ": 0.025} {
		got, err := parsePP("x", in)
		if err != nil || got < want-1e-12 || got > want+1e-12 {
			t.Errorf("parsePP(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-1pp", "101%", "3ppp"} {
		if _, err := parsePP("x", bad); err == nil {
			t.Errorf("parsePP(%q) accepted", bad)
		}
	}
}

func FuzzParsePP(f *testing.F) {
	for _, s := range []string{"3pp", "3%", "0.03", "-1", "1e400", "NaN%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := parsePP("x", s)
		if err == nil && (x < 0 || x > 1 || x != x) {
			t.Fatalf("parsePP(%q) = %v", s, x)
		}
	})
}

// The resume hint names --out unless the experiment is in the default
// store, and quotes what a shell would split.
func TestResumeCommand(t *testing.T) {
	for _, tt := range []struct{ root, want string }{
		{store.DefaultRoot(), "headroom run --resume E1"},
		{"/tmp/x", "headroom run --resume E1 --out /tmp/x"},
		{"/tmp/my runs", "headroom run --resume E1 --out '/tmp/my runs'"},
		{"/tmp/it's", `headroom run --resume E1 --out '/tmp/it'\''s'`},
	} {
		if got := resumeCommand("E1", tt.root); got != tt.want {
			t.Errorf("resumeCommand(%q) = %q, want %q", tt.root, got, tt.want)
		}
	}
}
