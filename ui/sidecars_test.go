package ui

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

func TestSidecarPeaksOnTheDetailLine(t *testing.T) {
	if got := sidecarPeaks(nil); got != "" {
		t.Errorf("running trial: %q", got)
	}
	if got := sidecarPeaks(&model.TrialResult{}); got != "" {
		t.Errorf("no sidecars: %q", got)
	}
	r := &model.TrialResult{Sidecars: []model.SidecarUsage{{Name: "db", PeakBytes: 41 * model.MiB}, {Name: "cache", PeakBytes: 9 * model.MiB, OOMKilled: true}}}
	if got, want := sidecarPeaks(r), " · sidecars db 41MiB, cache 9MiB (OOM-killed)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
