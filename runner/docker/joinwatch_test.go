package docker

import (
	"slices"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// What of a container's settings names another container: the
// namespaces it joins (container:REF), the containers whose volumes it
// mounts, and its cgroup parent; a mode of its own names none.
func TestJoinsReadsEveryWayIn(t *testing.T) {
	for _, c := range []struct {
		hc   container.HostConfig
		want []string
	}{
		{container.HostConfig{NetworkMode: "bridge", PidMode: "", IpcMode: "private"}, nil},
		{container.HostConfig{NetworkMode: "container:abc"}, []string{"abc network namespace"}},
		{container.HostConfig{PidMode: "container:trial-1", IpcMode: "container:trial-1", UTSMode: "container:x"},
			[]string{"trial-1 process namespace", "trial-1 IPC namespace", "x hostname namespace"}},
		{container.HostConfig{NetworkMode: "host", PidMode: "host"}, nil},
		{container.HostConfig{VolumesFrom: []string{"trial:ro", "other"}}, []string{"trial volumes", "other volumes"}},
		{container.HostConfig{Resources: container.Resources{CgroupParent: "/docker/0123abcd"}}, []string{"/docker/0123abcd cgroup (its memory charged to the trial's limit)"}},
		{container.HostConfig{NetworkMode: "container:"}, nil},
	} {
		var got []string
		for _, j := range joins(&c.hc) {
			got = append(got, j.ref+" "+j.how)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("joins(%+v) = %q, want %q", c.hc, got, c.want)
		}
	}
}
