package runner

import (
	"strings"
	"testing"
)

// Only what carries every label headroom sets is proven headroom's: a
// container labelled headroom and headroom.kept by hand (no experiment,
// trial or owner) was listed by `clean --dry-run` as one it would
// remove.
func TestNotProvenOwn(t *testing.T) {
	own := OwnedResource{Kind: "container", Name: "c", Experiment: "20261202-1", Trial: "t0001", Owner: "vm:4242:123456:0f3c-99:4026531836", Kept: true}
	if why := NotProvenOwn(own); why != "" {
		t.Errorf("a resource headroom made: %q", why)
	}
	for _, c := range []struct {
		o    OwnedResource
		want string
	}{
		{OwnedResource{Kind: "container", Kept: true}, "no headroom.experiment, no headroom.trial, no headroom.owner"},
		{OwnedResource{Kind: "container", Experiment: "e", Owner: "vm:4242:123456:0f3c-99:4026531836", Kept: true}, "no headroom.trial"},
		{OwnedResource{Kind: "container", Experiment: "e", Trial: "t0001", Owner: "vm:4242", Kept: true}, "no headroom.owner as host:pid:start:boot:pidns"},
		// An older headroom's label: no boot, no pid namespace.
		{OwnedResource{Kind: "container", Experiment: "e", Trial: "t0001", Owner: "vm:4242:123456", Kept: true}, "no headroom.owner as host:pid:start:boot:pidns"},
		{OwnedResource{Kind: "network", Experiment: "e", Trial: "t0001", Owner: "vm:x:1"}, "no headroom.owner"},
		{OwnedResource{Kind: "volume", Experiment: "e", Trial: "t0001", Owner: ":4242:1"}, "no headroom.owner"},
		{OwnedResource{Kind: "container", Experiment: "e", Trial: "t0001", Owner: "vm:4242:later"}, "no headroom.owner"},
	} {
		if why := NotProvenOwn(c.o); !strings.Contains(why, c.want) {
			t.Errorf("%+v: %q, want it to say %q", c.o, why, c.want)
		}
	}
}

// A build's own network (made for an image, before any trial) is proven
// headroom's by its build and complete owner labels: clean had left it
// ("no headroom.experiment, no headroom.trial") after a headroom killed
// mid-build, and nothing else ever removed it. The build label proves
// nothing on anything else, or without a whole owner.
func TestABuildsNetworkIsProvenByItsBuildAndOwner(t *testing.T) {
	build := OwnedResource{Kind: "network", Name: "headroom-build-46f4310b8725", Build: "headroom-task/x:25d5", Owner: "vm:12733:375773:0f3c-99:4026531836"}
	if why := NotProvenOwn(build); why != "" {
		t.Errorf("a build's network with its owner: %q", why)
	}
	for _, o := range []OwnedResource{
		{Kind: "network", Name: "n", Build: "headroom-task/x:1", Owner: "vm:12733"},
		{Kind: "network", Name: "n", Build: "headroom-task/x:1"},
		{Kind: "container", Name: "c", Build: "headroom-task/x:1", Owner: "vm:12733:375773:0f3c-99:4026531836"},
	} {
		if NotProvenOwn(o) == "" {
			t.Errorf("%+v: proven headroom's", o)
		}
	}
}
