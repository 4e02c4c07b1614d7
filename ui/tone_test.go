package ui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// Every tone an outcome or cause carries names a role the themes colour:
// themes imports nothing of model, so the roles agree by their names.
func TestEveryToneIsAThemeRole(t *testing.T) {
	st := themes.Dark().Styles
	for tone, want := range map[model.Tone]lipgloss.Style{
		model.ToneOK: st.OK, model.ToneWarn: st.Warn, model.ToneOOM: st.OOM, model.ToneDanger: st.Danger, model.ToneMuted: st.Muted,
	} {
		if got := st.Tone(string(tone)); fmt.Sprint(got.GetForeground()) != fmt.Sprint(want.GetForeground()) {
			t.Errorf("tone %q is coloured %v, want %v", tone, got.GetForeground(), want.GetForeground())
		}
	}
	for _, o := range model.Outcomes {
		if fmt.Sprint(outcomeStyle(st, o).GetForeground()) != fmt.Sprint(st.Tone(string(o.Tone())).GetForeground()) {
			t.Errorf("outcome %s not in its tone's colour", o)
		}
	}
}
