package docker

import "github.com/docker/docker/api/types/container"

// removeOptions is how headroom removes a container it made (a trial's,
// a sidecar's, a helper's; one a dead run kept or left, by clean): with
// the anonymous volumes the engine made for it (an image's VOLUME; `docker
// rm -v`), which carry no label and which nothing would find after it.
// A named volume (a compose file's, made and labelled by the trial) is
// not one of them: the engine keeps a volume mounted by its name, and the
// trial removes its own (sidecars.go).
var removeOptions = container.RemoveOptions{Force: true, RemoveVolumes: true}
