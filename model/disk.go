package model

import "fmt"

// DiskUse is what a trial wrote to its container's own file system and
// what bounded it: the task's storage spec (Harbor's storage_mb), the
// bound the engine was asked to hold (a container's size, which only some
// storage drivers can enforce) or why none was, and the engine's count of
// the container's writable layer at the end.
//
// Harbor's Docker environment never applies storage_mb (its compose file
// sets cpus and memory only); its Daytona environment asks for the disk
// in whole GiB. headroom applies it where the engine can size a
// container, and says so here.
type DiskUse struct {
	// SpecBytes is the task's storage (storage_mb); 0 when it sets none.
	SpecBytes int64 `json:"spec_bytes,omitempty"`
	// BoundBytes is the size the engine held the container's file system
	// to (its storage option "size"); 0 when none was applied.
	BoundBytes int64 `json:"bound_bytes,omitempty"`
	// Unbounded says, for a spec not applied, why ("the fuse-overlayfs
	// storage driver cannot size a container: --storage-opt is not
	// supported").
	Unbounded string `json:"unbounded,omitempty"`
	// WrittenBytes is the container's writable layer when the trial ended
	// (the engine's SizeRw): what its steps wrote or changed, and the
	// files headroom copied in (tests, solution); where the layer is
	// read on this host, with what it wrote at its harness's mounts
	// (Task.HarnessMounts), and a sparse file at the blocks it holds (the
	// engine's SizeRw, read elsewhere, counts its length); not other
	// volumes, not tmpfs.
	WrittenBytes int64 `json:"written_bytes"`
	// Unread says why WrittenBytes could not be read whole (the engine did
	// not answer in time; more files than could be counted): it is then
	// what was counted, at least that, or 0.
	Unread string `json:"unread,omitempty"`
}

// Over says whether the trial wrote more than its spec while no bound
// held it there.
func (d *DiskUse) Over() bool {
	return d != nil && d.SpecBytes > 0 && d.BoundBytes == 0 && d.WrittenBytes > d.SpecBytes
}

// Note is what the record's reason says of the trial's disk: only when
// it wrote past a spec nothing enforced, since a Harbor run on Docker
// would not have stopped it either, and a run that bounds it would have.
func (d *DiskUse) Note() string {
	if !d.Over() {
		return ""
	}
	why := d.Unbounded
	if why == "" {
		why = "the engine was not asked to bound it"
	}
	wrote := FormatBytes(d.WrittenBytes)
	if d.Unread != "" {
		wrote = "at least " + wrote
	}
	return fmt.Sprintf("the trial wrote %s to its container's file system, above its storage_mb of %s, which was not enforced (%s; Harbor's Docker environment does not enforce it either; its Daytona environment sizes the sandbox's disk by it, in whole GiB)",
		wrote, FormatBytes(d.SpecBytes), why)
}

// Brief is the disk in a few words for a table cell: "200MiB of 50MiB
// (not bounded)", "12KiB of 50MiB (bounded)", "12KiB"; "" when unread.
func (d *DiskUse) Brief() string {
	if d == nil || (d.Unread != "" && d.WrittenBytes == 0) {
		return ""
	}
	s := FormatBytes(d.WrittenBytes)
	if d.Unread != "" {
		s = "at least " + s
	}
	switch {
	case d.BoundBytes > 0:
		s += " of " + FormatBytes(d.BoundBytes) + " (bounded)"
	case d.SpecBytes > 0:
		s += " of " + FormatBytes(d.SpecBytes) + " (not bounded)"
	}
	return s
}
