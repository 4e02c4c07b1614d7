package docker

import (
	"reflect"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

func TestRunFlags(t *testing.T) {
	spec := model.Resources{CPUs: 0.5, MemoryBytes: 64 * model.MiB, PidsLimit: 100}
	got := RunFlags(model.NewPolicy(spec, model.Ratio{K: 2}, 4))
	want := []string{"--memory=134217728", "--memory-swap=134217728", "--memory-reservation=67108864", "--cpus=1", "--cpu-shares=512", "--pids-limit=100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flags\n got %v\nwant %v", got, want)
	}
	got = RunFlags(model.NewPolicy(spec, model.Uncapped, 4))
	want = []string{"--memory-reservation=67108864", "--cpu-shares=512", "--pids-limit=100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("uncapped flags\n got %v\nwant %v", got, want)
	}
}

// The docker run equivalent sets the container up as the trial's is: the
// hardened profile's user, capabilities and no privilege gain were left
// out, so the command someone copied ran as root with every capability.
func TestReproduceCarriesTheProfile(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB}
	p := model.NewPolicy(spec, model.Ratio{K: 1}, 4)
	hardened := model.Task{Name: "x/builtin", Network: "none", User: "65534:65534", Resources: spec}
	hardened.SetProfile(model.ProfileHardened)
	got := Reproduce(hardened, "img:1", p)
	for _, want := range []string{"docker run --network none --user 65534:65534 --cap-drop ALL --security-opt no-new-privileges --memory=67108864", " img:1"} {
		if !strings.Contains(got, want) {
			t.Errorf("hardened: %q lacks %q", got, want)
		}
	}
	withCaps := hardened
	withCaps.User, withCaps.Capabilities = "", []string{"CHOWN", "SETUID"}
	if got := Reproduce(withCaps, "img:1", p); !strings.Contains(got, "--cap-drop ALL --cap-add CHOWN --cap-add SETUID --security-opt no-new-privileges") || strings.Contains(got, "--user") {
		t.Errorf("hardened with capabilities: %q", got)
	}
	harbor := model.Task{Name: "x/harbor", Network: "bridge", Resources: spec}
	harbor.SetProfile(model.ProfileHarbor)
	if got := Reproduce(harbor, "img:1", p); !strings.HasPrefix(got, "docker network create headroom-repro && docker run --network headroom-repro ") || strings.Contains(got, "--cap-drop") || strings.Contains(got, "no-new-privileges") || !strings.Contains(got, "--ulimit nofile=") {
		t.Errorf("harbor: %q", got)
	}
	if got := Reproduce(model.Task{}, "img:1", p); !strings.HasPrefix(got, "docker run --network none --memory=") {
		t.Errorf("no task known: %q", got)
	}
}

// Every value of the docker run shown is one shell word: a compose
// `user: "0 $(touch …) x"` was printed bare, and pasting the command ran
// the touch (the loaders refuse such a user now; a task from elsewhere —
// a record, a manifest — still reaches here).
func TestReproduceQuotesValues(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB}
	p := model.NewPolicy(spec, model.Ratio{K: 1}, 4)
	task := model.Task{Name: "x/q", Network: "bridge", User: "0 $(touch /tmp/PWNED) x", Capabilities: []string{"NET_ADMIN;id"}, Resources: spec}
	task.SetProfile(model.ProfileHarbor)
	got := Reproduce(task, "img:1 $(id)", p)
	for _, want := range []string{"--user '0 $(touch /tmp/PWNED) x'", "--cap-add 'NET_ADMIN;id'", " 'img:1 $(id)'"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if f := ContainerFlags(task); !strings.Contains(strings.Join(f, " "), "--user '0 $(touch /tmp/PWNED) x'") {
		t.Errorf("container flags %q", f)
	}
}

// A trial with a network runs on a bridge of its own (round three), so
// the command that reproduces it makes one: it said --network bridge,
// the engine's default bridge beside every other container, and
// --network trial-only, which is no network the engine knows.
func TestReproduceMakesTheTrialsOwnNetwork(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB}
	p := model.NewPolicy(spec, model.Ratio{K: 1}, 4)
	for _, c := range []struct {
		network string
		wants   bool
		want    string
	}{
		{"bridge", false, "docker network create headroom-repro && docker run --network headroom-repro "},
		{"default", false, "docker network create headroom-repro && docker run --network headroom-repro "},
		{model.NetworkTrialOnly, false, "docker network create --internal -o com.docker.network.bridge.inhibit_ipv4=true headroom-repro && docker run --network headroom-repro "},
		{"none", true, "docker network create headroom-repro && docker run --network headroom-repro "},
		{"none", false, "docker run --network none "},
	} {
		task := model.Task{Name: "x/net", Network: c.network, Resources: spec}
		if c.wants {
			task.VerifierNetwork = &model.NetworkPolicy{Mode: model.NetworkAllowlist, AllowedHosts: []string{"10.0.0.1"}}
		}
		if got := Reproduce(task, "img:1", p); !strings.HasPrefix(got, c.want) || strings.Contains(got, "--network bridge") {
			t.Errorf("network %q (a phase wants one: %v):\n got %q\nwant it to start %q", c.network, c.wants, got, c.want)
		}
	}
}

// The command that reproduces a Harbor trial mounts an empty volume where
// Harbor bind-mounts its host's log directories, as the trial had.
func TestReproduceMountsTheHarnessDirectories(t *testing.T) {
	task := model.Task{Name: "hb/x", Network: "none", HarnessMounts: []string{"/logs/verifier", "/logs/agent"}}
	got := strings.Join(ContainerFlags(task), " ")
	for _, want := range []string{"--mount type=volume,dst=/logs/verifier,volume-nocopy", "--mount type=volume,dst=/logs/agent,volume-nocopy"} {
		if !strings.Contains(got, want) {
			t.Errorf("container flags %q lack %q", got, want)
		}
	}
}

// The command that reproduces a trial sets the steps' working directory
// and environment, a host variable by name only: without them it was not
// the container the trial ran in (the twenty-eighth attacker's 7). What
// a record made elsewhere holds is quoted, never run.
func TestReproduceSetsTheWorkdirAndEnvironment(t *testing.T) {
	task := model.Task{Name: "hb/x", Network: "none", WorkDir: "/app/my dir", Env: []string{"MODE=fast $(id)", "EMPTY="},
		PassEnv: []string{"API_KEY", "JUDGE=HOST_JUDGE", `BAD=X"$(touch /tmp/PWNED)"`}}
	got := strings.Join(ContainerFlags(task), " ")
	for _, want := range []string{"--workdir '/app/my dir'", "--env 'MODE=fast $(id)'", "--env EMPTY=", "--env API_KEY", `--env JUDGE="$HOST_JUDGE"`, "--env BAD --"} {
		if !strings.Contains(got+" --", want) {
			t.Errorf("container flags %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "PWNED") {
		t.Errorf("container flags %q carry a host name that would run", got)
	}
}
