package docker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/headroom-eval/headroom/model"
)

// A task's storage is asked of the engine only where its driver can size
// a container, and never again once the engine refused; elsewhere the
// record is told why it was not.
func TestStorageBoundByDriver(t *testing.T) {
	refused := "--storage-opt is supported only for overlay over xfs with 'pquota' mount option"
	for _, c := range []struct {
		driver, backing string
		refused         *string
		bound           int64
		why             string
	}{
		{"fuse-overlayfs", "", nil, 0, "the fuse-overlayfs storage driver cannot size a container"},
		{"vfs", "", nil, 0, "the vfs storage driver cannot size a container"},
		{"", "", nil, 0, "the engine's storage driver is unknown"},
		{"overlay2", "extfs", nil, 0, "the overlay2 storage driver sizes a container only on xfs (with pquota), not on extfs"},
		{"overlay2", "xfs", nil, 50 * model.MiB, ""},
		{"overlay2", "", nil, 50 * model.MiB, ""}, // the engine did not say: asked, its refusal learnt
		{"btrfs", "btrfs", nil, 50 * model.MiB, ""},
		{"zfs", "", nil, 50 * model.MiB, ""},
		{"overlay2", "xfs", &refused, 0, "the engine refused to size a container: " + refused},
	} {
		bound, why := storageBound(50*model.MiB, c.driver, c.backing, c.refused)
		if bound != c.bound || why != c.why {
			t.Errorf("%s on %q (refused %v): %d %q, want %d %q", c.driver, c.backing, c.refused != nil, bound, why, c.bound, c.why)
		}
	}

	// Not asked for (the default, as Harbor's Docker environment): never
	// bounded, and said so.
	task := model.Task{StorageBytes: 50 * model.MiB}
	off := &Backend{opts: Options{StorageDriver: "overlay2", BackingFilesystem: "xfs"}}
	if hc := (&container.HostConfig{}); off.sizeContainer(hc, task).Unbounded != NotAppliedStorage || hc.StorageOpt != nil {
		t.Errorf("without --apply-storage: storage opt %v, want none and %q", hc.StorageOpt, NotAppliedStorage)
	}
	b := &Backend{opts: Options{StorageDriver: "overlay2", BackingFilesystem: "xfs", ApplyStorage: true}}
	hc := &container.HostConfig{}
	if d := b.sizeContainer(hc, task); d.BoundBytes != 50*model.MiB || hc.StorageOpt["size"] != "52428800" {
		t.Errorf("xfs: %+v, storage opt %v", d, hc.StorageOpt)
	}
	err := errors.New("Error response from daemon: --storage-opt is supported only for overlay over xfs with 'pquota' mount option")
	if !storageOptRefused(err) || storageOptRefused(errors.New("no such image")) {
		t.Error("the engine's refusal of a size is not told apart")
	}
	b.refuseStorage(err)
	hc = &container.HostConfig{}
	if d := b.sizeContainer(hc, task); d.BoundBytes != 0 || hc.StorageOpt != nil || !strings.HasPrefix(d.Unbounded, "the engine refused to size a container: --storage-opt is supported only") {
		t.Errorf("after the refusal: %+v, storage opt %v", d, hc.StorageOpt)
	}
	if d := b.sizeContainer(&container.HostConfig{}, model.Task{}); d != (model.DiskUse{}) {
		t.Errorf("no storage: %+v", d)
	}
}

// A layer's bytes are its files' sizes, a hard link counted once, as the
// engine's SizeRw counts them, a sparse file at what it holds.
func TestLayerBytes(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "var", "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "var", "tmp", "fill"), make([]byte, 3000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "var", "tmp", "fill"), filepath.Join(dir, "again")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := layerBytes(context.Background(), dir); err != nil || n != 3005 {
		t.Errorf("%d %v, want 3005", n, err)
	}
	// A sparse file counts the blocks it holds, not its length (a
	// `truncate -s 4T` read as 4 TiB written).
	sparse := filepath.Join(dir, "sparse")
	if err := os.WriteFile(sparse, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 1<<40); err != nil {
		t.Fatal(err)
	}
	if n, err := layerBytes(context.Background(), dir); err != nil || n < 3005+8192 || n > 3005+1<<20 {
		t.Errorf("with a 1 TiB sparse file holding 8 KiB: %d %v, want about %d", n, err, 3005+8192)
	}
	if _, err := layerBytes(context.Background(), filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing layer directory was counted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := layerBytes(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("a count past its deadline: %v", err)
	}
}

// On an engine that refuses to size a container, the refusal is learnt
// at the trial that asked (created again without the size, and run), and
// the record says why its storage was not held, what the trial wrote and
// that it was more. Where the engine does size it, the write fails there.
func TestStorageRefusalIsLearnt(t *testing.T) {
	needDebian(t)
	task := model.Task{Name: "test/storage", Image: DebianImage, IdleCommand: []string{"sleep", "infinity"}, Network: "none",
		Resources: model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB}, AgentTimeout: time.Minute, VerifierTimeout: time.Minute,
		StorageBytes: 8 * model.MiB,
		Verifier:     model.Step{Name: "verify", Argv: []string{"bash", "-c", "test -s /var/tmp/fill"}},
		Agents: []model.Agent{{Name: "writer", Steps: []model.Step{{Name: "write",
			Argv: []string{"bash", "-c", "head -c 16M /dev/zero > /var/tmp/fill"}}}}}}
	task.SetProfile(model.ProfileHarbor)
	// Said to be overlay2, of no known backing file system: the size is
	// asked, and this engine's answer decides.
	b := newBackend(t, Options{DriverBinary: testBinary, StorageDriver: "overlay2", ApplyStorage: true})
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	if len(results) != 1 || results[0].Disk == nil {
		t.Fatalf("results %+v: want one, with its disk", results)
	}
	r, d := results[0], results[0].Disk
	t.Logf("%s: %s; disk %+v", r.Outcome, r.Reason, *d)
	if d.SpecBytes != 8*model.MiB {
		t.Errorf("spec %d", d.SpecBytes)
	}
	if d.BoundBytes > 0 {
		// This engine sizes containers: the write stopped at the bound.
		if r.Outcome == model.Passed || d.WrittenBytes > 9*model.MiB {
			t.Errorf("bounded at 8MiB, yet %s with %s written", r.Outcome, model.FormatBytes(d.WrittenBytes))
		}
		return
	}
	if b.storageRefused.Load() == nil || !strings.HasPrefix(d.Unbounded, "the engine refused to size a container: --storage-opt") {
		t.Errorf("unbounded %q: want the engine's refusal, learnt", d.Unbounded)
	}
	if r.Outcome != model.Passed || d.WrittenBytes < 16*model.MiB || !strings.Contains(r.Reason, "above its storage_mb of 8MiB") {
		t.Errorf("%s, %s written, reason %q: want passed, at least 16MiB, and the note", r.Outcome, model.FormatBytes(d.WrittenBytes), r.Reason)
	}
}
