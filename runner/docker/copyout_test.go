package docker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// CopyOut takes at most its budget's entries and bytes: one more is the
// task's oversized artifacts (the attacker's 44,852 empty files were
// copied whole, for 85 s), and nothing past the bound is written on the
// host. The budget is one for all of a trial's paths: each path had its
// own 1 GiB, and three paths of 900 MB put 2.7 GB on the host. Lowered
// here to 100 entries, and to 1 MiB.
func TestCopyOutBoundsEntries(t *testing.T) {
	// /many holds itself and 100 files (101 entries), /few itself and 99.
	sb := startPrepared(t, "copyout-entries", "mkdir /many /few && cd /many && touch $(seq 1 100) && cd /few && touch $(seq 1 99) && mkdir /a /b && head -c 700K /dev/zero > /a/f && head -c 700K /dev/zero > /b/f")
	ctx := context.Background()
	copier := sb.(runner.ArtifactCopier)
	host := t.TempDir()
	if err := copier.CopyOut(ctx, "/few", host, &runner.CopyBudget{Bytes: 1 << 20, Entries: 100}); err != nil {
		t.Errorf("CopyOut of 100 entries (the bound): %v, want them copied", err)
	}
	if got, _ := os.ReadDir(filepath.Join(host, "few")); len(got) != 99 {
		t.Errorf("CopyOut of /few: %d files on the host, want 99", len(got))
	}
	err := copier.CopyOut(ctx, "/many", host, &runner.CopyBudget{Bytes: 1 << 20, Entries: 100})
	if !errors.Is(err, runner.ErrTooManyEntries) || !errors.Is(err, runner.ErrTaskOversized) {
		t.Errorf("CopyOut of 101 entries: %v, want ErrTooManyEntries (the task's oversized artifacts)", err)
	}
	if got, _ := os.ReadDir(filepath.Join(host, "many")); len(got) > 99 {
		t.Errorf("CopyOut of /many: %d files written on the host, want at most 99 (the bound's 100 entries, its directory one)", len(got))
	}
	// One budget for all paths: 700 KiB, then 700 KiB more past 1 MiB.
	shared := &runner.CopyBudget{Bytes: 1 << 20, Entries: 100}
	if err := copier.CopyOut(ctx, "/a", host, shared); err != nil {
		t.Errorf("CopyOut of /a (700 KiB of a 1 MiB budget): %v", err)
	}
	if err := copier.CopyOut(ctx, "/b", host, shared); !errors.Is(err, runner.ErrTaskOversized) {
		t.Errorf("CopyOut of /b, 700 KiB more on the same 1 MiB budget: %v, want ErrTaskOversized (the budget is the trial's, not each path's)", err)
	}
}

// A sparse artifact stays sparse on the host: the engine's copy carries
// its zeros whole (tar holds no holes), and a 64 MiB file of one written
// byte took 64 MiB of the host's disk, times the trial's paths and the
// concurrency. Runs of zeros are now holes: the file reads the same and
// takes a few KiB.
func TestCopyOutKeepsHoles(t *testing.T) {
	sb := startPrepared(t, "copyout-sparse", "mkdir /s && truncate -s 64M /s/f && printf x | dd of=/s/f bs=1 seek=33554432 conv=notrunc status=none")
	ctx := context.Background()
	host := t.TempDir()
	if err := sb.(runner.ArtifactCopier).CopyOut(ctx, "/s", host, runner.NewCopyBudget()); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(host, "s", "f")
	data, err := os.ReadFile(p)
	if err != nil || len(data) != 64<<20 || data[32<<20] != 'x' || bytes.Count(data, []byte{0}) != 64<<20-1 {
		t.Fatalf("the copy reads %d bytes (err %v), want 64 MiB of zeros but one x at 32 MiB", len(data), err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if used := st.Blocks * 512; used > 1<<20 {
		t.Errorf("the copy takes %s of the host's disk for one written byte, want its zeros as holes (under 1 MiB)", model.FormatBytes(used))
	}
}

// startPrepared starts a Debian container (trial id, no network, 1 CPU,
// 128 MiB, uncapped) that runs prep, and returns once prep is done; it is
// removed after the test.
func startPrepared(t *testing.T, id, prep string) runner.Sandbox {
	t.Helper()
	needDebian(t)
	b := newBackend(t, Options{})
	task := model.Task{Name: "test/" + id, Image: DebianImage, Network: "none",
		IdleCommand: []string{"sh", "-c", prep + " && touch /ready && sleep infinity"},
		Resources:   model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}}
	task.SetProfile(model.ProfileHarbor)
	tr := model.Trial{ID: id, Task: task.Name, Ratio: model.Uncapped, Policy: model.NewPolicy(task.Resources, model.Uncapped, 2)}
	ctx := context.Background()
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Remove(ctx) })
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := sb.ReadFile(ctx, "/ready"); err == nil {
			return sb
		}
		if time.Now().After(deadline) {
			t.Fatal("the container made no /ready within 2 minutes")
		}
	}
}
