package docker

import (
	"context"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
)

// A container someone else starts can join a running trial from outside:
// its network namespace (--network container:T, which reads the trial's
// localhost), its processes' (--pid container:T, which can signal or
// trace its steps), its IPC, its cgroup (--cgroup-parent under the
// trial's: its memory is charged to the trial's limit), or its volumes
// (--volumes-from T). What runs there runs in the trial, and none of it
// is the task's. The joiner carries no label of headroom's, so the label
// filter of watchEvents never shows it: watchJoins reads the engine's
// start events of every container, and each one headroom did not create
// is inspected; one that names a trial's container (or a part of one: a
// sidecar, a network helper) makes that trial not the task's evidence,
// as a foreign exec does (the eleventh attacker's 8, which went unseen).

// joinWitness is the prefix of the witness a joining container leaves.
const joinWitness = "a container someone other than headroom started"

// watchJoins follows the engine's container starts (follow).
func (b *Backend) watchJoins(ctx context.Context) {
	f := filters.NewArgs(filters.Arg("type", string(events.ContainerEventType)), filters.Arg("event", string(events.ActionStart)))
	b.follow(ctx, f, func(at time.Time, m events.Message) { b.eventStart(ctx, at, m.Actor.ID) })
}

// created marks id as a container headroom made (before it starts):
// its helpers join their trial's network namespace on purpose.
func (b *Backend) created(id string) {
	b.mu.Lock()
	if b.own == nil {
		b.own = map[string]bool{}
	}
	b.own[id] = true
	b.mu.Unlock()
}

// eventStart judges a container that started at at: headroom's own, or
// one that joins no trial, says nothing.
func (b *Backend) eventStart(ctx context.Context, at time.Time, id string) {
	b.mu.Lock()
	_, trial := b.sandboxes[id]
	_, part := b.parts[id]
	own := b.own[id]
	watching := len(b.sandboxes) > 0
	b.mu.Unlock()
	if trial || part || own || !watching {
		return
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := b.cli.ContainerInspect(ictx, id)
	if err != nil || info.ContainerJSONBase == nil || info.HostConfig == nil {
		return // gone already: what it did, it did to its trial's record only if it was a part
	}
	for _, j := range joins(info.HostConfig) {
		w, where := b.joined(ictx, j.ref)
		if w == nil {
			continue
		}
		name := strings.TrimPrefix(info.Name, "/")
		w.partStopped(at, joinWitness+" ("+name+", "+containerShort(id)+") joined "+where+"'s "+j.how+": what it ran there ran in the trial")
	}
}

// containerShort is a container id as the engine's CLI shows it.
func containerShort(id string) string { return id[:min(len(id), 12)] }

// join is one way a container's settings reach another container (ref:
// a name or an id, as given) or, for a cgroup parent, a path.
type join struct{ ref, how string }

// joins lists what of hc names another container.
func joins(hc *container.HostConfig) []join {
	var out []join
	for _, m := range []struct{ mode, how string }{
		{string(hc.NetworkMode), "network namespace"},
		{string(hc.PidMode), "process namespace"},
		{string(hc.IpcMode), "IPC namespace"},
		{string(hc.UTSMode), "hostname namespace"},
	} {
		if ref, ok := strings.CutPrefix(m.mode, "container:"); ok && ref != "" {
			out = append(out, join{ref: ref, how: m.how})
		}
	}
	for _, v := range hc.VolumesFrom {
		ref, _, _ := strings.Cut(v, ":")
		if ref != "" {
			out = append(out, join{ref: ref, how: "volumes"})
		}
	}
	if hc.CgroupParent != "" {
		out = append(out, join{ref: hc.CgroupParent, how: "cgroup (its memory charged to the trial's limit)"})
	}
	return out
}

// joined finds the trial a join names: by the engine's own resolution of
// the name or id prefix given, or, for a cgroup parent, a trial's id in
// the path. nil: none of this backend's trials.
func (b *Backend) joined(ctx context.Context, ref string) (*stopWitness, string) {
	b.mu.Lock()
	ids := make([]string, 0, len(b.sandboxes))
	for id := range b.sandboxes {
		ids = append(ids, id)
	}
	b.mu.Unlock()
	id := ""
	for _, t := range ids {
		if strings.Contains(ref, t) {
			id = t // a cgroup path, or the full id itself
		}
	}
	if id == "" && !strings.Contains(ref, "/") {
		if info, err := b.cli.ContainerInspect(ctx, ref); err == nil && info.ContainerJSONBase != nil {
			id = info.ID
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if sb := b.sandboxes[id]; sb != nil {
		return &sb.stops, "its container"
	}
	if p, ok := b.parts[id]; ok {
		return p.of, p.what
	}
	return nil, ""
}
