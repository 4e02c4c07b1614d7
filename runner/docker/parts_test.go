package docker

import (
	"testing"
	"time"
)

// What the witness makes of a trial's parts stopped (#40.11): someone
// else's kill or disconnect before headroom's own stop names the part;
// headroom's own disconnects (reported more than once) and anything
// after its stop do not; the trial's own kill comes first.
func TestStopWitnessParts(t *testing.T) {
	t0 := time.Now()
	cases := []struct {
		name string
		do   func(w *stopWitness)
		want string
	}{
		{"a sidecar killed", func(w *stopWitness) { w.partStopped(t0, "a kill of its sidecar") }, "a kill of its sidecar"},
		{"after headroom's stop", func(w *stopWitness) {
			w.ours()
			w.partStopped(time.Now().Add(time.Second), "a kill of its sidecar")
		}, ""},
		{"headroom's own disconnect, twice", func(w *stopWitness) {
			w.disconnecting("net", true)
			w.eventDisconnect(t0, "net")
			w.eventDisconnect(t0, "net")
		}, ""},
		{"someone's, after headroom connected it again", func(w *stopWitness) {
			w.disconnecting("net", true)
			w.eventDisconnect(t0, "net")
			w.disconnecting("net", false)
			w.eventDisconnect(t0.Add(time.Second), "net")
		}, "a disconnect (docker network disconnect) of its network `net`"},
		{"the trial's own kill first", func(w *stopWitness) {
			w.partStopped(t0, "a kill of its sidecar")
			w.external = "SIGKILL"
		}, "SIGKILL"},
	}
	for _, c := range cases {
		w := &stopWitness{}
		c.do(w)
		if got := w.outside(); got != c.want {
			t.Errorf("%s: outside %q, want %q", c.name, got, c.want)
		}
	}
}
