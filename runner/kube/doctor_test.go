package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/headroom-eval/headroom/runner"
)

// The documented Role cannot read ResourceQuotas: what bounds a pod is
// then not known, and said so with the rule that can read them, never
// "no quota" (issue #39).
func TestCapacitySaysQuotasItMayNotRead(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	forbid := func(res string) k8stesting.ReactionFunc {
		return func(k8stesting.Action) (bool, kruntime.Object, error) {
			return true, nil, apierrors.NewForbidden(corev1.Resource(res), "", errors.New("RBAC"))
		}
	}
	cs.PrependReactor("list", "resourcequotas", forbid("resourcequotas"))
	c, _ := p.namespaceCapacity(context.Background())
	got := c.describe("hr")
	if strings.Contains(got, "has no ResourceQuota") || !strings.Contains(got, "may not read namespace hr's ResourceQuotas") || !strings.Contains(got, "resources: [resourcequotas, limitranges], verbs: [get, list]") {
		t.Errorf("quotas unreadable: %q", got)
	}
	cs.PrependReactor("list", "limitranges", forbid("limitranges"))
	c, _ = p.namespaceCapacity(context.Background())
	if got := c.describe("hr"); strings.Contains(got, "has no") || !strings.Contains(got, "nor namespace hr's ResourceQuotas and LimitRanges") {
		t.Errorf("neither readable: %q", got)
	}
}

// doctor's namespace line is "ok" only for a namespace that exists and
// may be used: one it was refused to read and that does not exist, or one
// it may not use, is not (issue #39: `ok namespace …` for both).
func TestDoctorNamespaceRefusedOrMissing(t *testing.T) {
	ctx := context.Background()
	check := func(dryRun error) runner.Check {
		p, cs, _ := fakePlatform(t)
		cs.PrependReactor("get", "namespaces", func(k8stesting.Action) (bool, kruntime.Object, error) {
			return true, nil, apierrors.NewForbidden(corev1.Resource("namespaces"), "hr", errors.New("RBAC"))
		})
		cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, kruntime.Object, error) {
			if dryRun != nil {
				return true, nil, dryRun
			}
			return true, &corev1.Pod{}, nil
		})
		return p.namespaceCheck(ctx)
	}
	if c := check(apierrors.NewNotFound(corev1.Resource("namespaces"), "hr")); c.OK || !strings.Contains(c.Info, "does not exist") {
		t.Errorf("refused and missing: %+v", c)
	}
	if c := check(apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("RBAC"))); c.OK || !strings.Contains(c.Info, "may neither read it nor create a pod") {
		t.Errorf("refused and unusable: %+v", c)
	}
	if c := check(nil); !c.OK || !strings.Contains(c.Info, "may not read namespaces") {
		t.Errorf("refused but usable: %+v", c)
	}
	p, _, _ := fakePlatform(t)
	p.ns = "hr-none"
	if c := p.namespaceCheck(ctx); c.OK || c.Info != "does not exist" {
		t.Errorf("missing: %+v", c)
	}
}

// A --kubeconfig that is not there is the command line's mistake: a
// usage error (exit 2), not a failure (exit 1).
func TestMissingKubeconfigIsAUsageError(t *testing.T) {
	_, err := Open(context.Background(), map[string]string{OptKubeconfig: t.TempDir() + "/nope"}, nil)
	var se runner.SettingError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("missing kubeconfig: %v (%T)", err, err)
	}
}
