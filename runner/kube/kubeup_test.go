package kube

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kubeScript runs a bash snippet with kube/up.sh's steps defined (sourced:
// nothing runs by itself) and STATE in a test directory.
func kubeScript(t *testing.T, env []string, snippet string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command("bash", "-c", "source ./up.sh; "+snippet)
	cmd.Dir = "../../kube"
	cmd.Env = append(os.Environ(), append([]string{"HEADROOM_KUBE_STATE=" + t.TempDir()}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The local cluster leaves the machine's kernel settings and iptables as
// they were (issue #39: the kubelet set kernel.panic=10,
// kernel.panic_on_oops=1, vm.overcommit_memory=1 and left KUBE-FIREWALL's
// DROP rules behind): its kubelet may change no setting and make no
// chain, and kube-up refuses, changing nothing and naming each setting,
// unless the user consents. make kube-hostcheck is the whole check on a
// real up and down.
func TestKubeUpKeepsTheMachinesSettings(t *testing.T) {
	out, err := kubeScript(t, nil, `write_configs 10.0.0.1 && cat "$STATE/kubelet/config.yaml"`)
	if err != nil {
		t.Fatalf("write_configs: %v\n%s", err, out)
	}
	for _, want := range []string{"protectKernelDefaults: true", "makeIPTablesUtilChains: false"} {
		if !strings.Contains(out, want) {
			t.Errorf("the kubelet's configuration lacks %q:\n%s", want, out)
		}
	}
	panicNow, err := os.ReadFile("/proc/sys/kernel/panic")
	if err != nil || strings.TrimSpace(string(panicNow)) == "10" {
		t.Skip("this machine already has the kubelet's kernel.panic (or no /proc): nothing to refuse")
	}
	state := t.TempDir()
	out, err = kubeScript(t, []string{"HEADROOM_KUBE_SYSCTLS="}, `STATE=`+state+`/s; kernel_settings`)
	if err == nil || !strings.Contains(out, "kernel.panic=10 (now "+strings.TrimSpace(string(panicNow))+")") || !strings.Contains(out, "KUBE_SYSCTLS=set") {
		t.Errorf("without consent: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(state, "s")); err == nil {
		t.Error("a refused kube-up made its state dir")
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/panic"); string(now) != string(panicNow) {
		t.Errorf("a refused kube-up changed kernel.panic: %s → %s", panicNow, now)
	}
}
