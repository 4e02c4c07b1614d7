package docker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// proxiedClient puts a proxy in front of the test engine's local socket
// and returns a client that talks through it (the test is skipped for an
// engine that is not on a local socket); the client is closed at the end.
func proxiedClient(t *testing.T) (*enginetest.Cutter, *client.Client) {
	t.Helper()
	host := testCli.DaemonHost()
	if !strings.HasPrefix(host, "unix://") {
		t.Skipf("the engine is at %s, not a local socket a test can interpose on", host)
	}
	proxy := enginetest.NewCutter(t, "unix", strings.TrimPrefix(host, "unix://"))
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+proxy.Addr()), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return proxy, cli
}

func TestEngineVanishingMidTrialIsAnInfraError(t *testing.T) {
	needEngine(t)
	proxy, cli := proxiedClient(t)
	// The engine does not come back: waiting for it is cut short.
	b, err := New(context.Background(), cli, Options{EngineWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	task := parseTask(t, `
[task]
name = "test/outage"
[environment]
image = "builtin"
memory = "32M"
[verifier]
workload = { duration_ms = 10 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "long"
  workload = { duration_ms = 30000, base_mb = 2 }
`)
	var once sync.Once
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}, {K: 2}, {K: 3}}, 1, context.Background(), func(e event.Event) {
		if _, ok := e.(event.StepStarted); ok {
			once.Do(proxy.Cut)
		}
	})
	if len(results) != 3 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if r.Outcome != model.InfraError {
			t.Errorf("%s: %s (%s), want infra-error", r.ID, r.Outcome, r.Reason)
		}
	}
	// The engine "returns": what the outage left behind is found by label
	// and removed, as `headroom clean` does.
	left, err := testCli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runner.LabelTask+"=test/outage"))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range left {
		testCli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
	}
	t.Logf("reasons: %q; %d container(s) left by the outage, removed after it", []string{results[0].Reason, results[len(results)-1].Reason}, len(left))
}
