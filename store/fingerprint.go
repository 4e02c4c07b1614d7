package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// Fingerprint parts: what a task file defines, each hashed on its own so
// that a resume can say what changed.
const (
	partImage       = "image"
	partEnvironment = "environment"
	partResources   = "resources"
	partTimeouts    = "timeouts"
	partVerifier    = "verifier"
	partInstruction = "instruction"
	partAgentPrefix = "agent "
)

// fingerprintVersion marks fingerprints that hash what a task's files
// hold, by their place in the task, not the host paths they were loaded
// from (version 1, unmarked: paths, so a moved tasks directory read as
// changed and an edited tests/test.sh did not).
const (
	fingerprintVersionKey = "v"
	fingerprintVersion    = "2"
)

// TaskFingerprint hashes each part of a task's definition as loaded (its
// image or build, environment, resources, time limits, verifier,
// instruction, and each agent's steps): what a resume compares against
// the files it reloads, so an experiment's trials all run one task. The
// files a step uploads and a build's context count by their contents
// and their place under the task's directory (fileDigest).
func TaskFingerprint(t model.Task) map[string]string {
	out := fingerprintOf(withFileDigests(t))
	out[fingerprintVersionKey] = fingerprintVersion
	return out
}

func fingerprintOf(t model.Task) map[string]string {
	parts := map[string]any{
		partImage: []any{t.Image, t.Build},
		partEnvironment: []any{t.IdleCommand, t.Network, t.User, t.Capabilities, t.Env, t.PassEnv, t.StorageBytes, t.GPUs, t.AgentUser,
			t.WorkDir, t.Healthcheck, t.Sidecars, t.DependsOn, t.Volumes},
		partResources:   t.Resources,
		partTimeouts:    []any{t.AgentTimeout, t.VerifierTimeout},
		partVerifier:    []any{t.Verifier, t.Verdict, t.Phases, t.PhaseReward, t.Collect, t.Artifacts, t.SeparateVerifier},
		partInstruction: t.Instruction,
	}
	for _, a := range t.Agents {
		parts[partAgentPrefix+a.Name] = a
	}
	out := make(map[string]string, len(parts)+1)
	for k, v := range parts {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		sum := sha256.Sum256(b)
		out[k] = hex.EncodeToString(sum[:12])
	}
	return out
}

// Changes says how task t, as it loads now, differs from the task this
// entry recorded when the experiment started ("memory 64MiB → 512MiB",
// "verifier changed"); none when it is the same task. Entries from before
// fingerprints compare what they recorded: the image, the resources,
// the agents.
func (e TaskEntry) Changes(t model.Task) []string {
	var out []string
	r0, r1 := e.Resources, t.Resources
	bytesChange := func(what string, a, b int64) {
		if a != b {
			out = append(out, fmt.Sprintf("%s %s → %s", what, model.FormatBytes(a), model.FormatBytes(b)))
		}
	}
	bytesChange("memory", r0.MemoryBytes, r1.MemoryBytes)
	bytesChange("memory limit", r0.MemoryLimitBytes, r1.MemoryLimitBytes)
	if r0.CPUs != r1.CPUs {
		out = append(out, fmt.Sprintf("cpus %g → %g", r0.CPUs, r1.CPUs))
	}
	if r0.PidsLimit != r1.PidsLimit {
		out = append(out, fmt.Sprintf("pids limit %d → %d", r0.PidsLimit, r1.PidsLimit))
	}
	resourceLines := len(out)
	if e.Fingerprint == nil {
		// An older manifest: what it has. Its Image is the one the trials
		// ran (resolved), so only a named image is compared.
		if e.BuiltFrom == "" && t.Build == nil && e.Image != "" && t.Image != "" && !strings.HasPrefix(e.Image, t.Image) && e.Image != t.Image {
			out = append(out, fmt.Sprintf("image %s → %s", e.Image, t.Image))
		}
		if v := t.Verdict.String(); e.Verdict != "" && v != e.Verdict {
			out = append(out, fmt.Sprintf("verdict %s → %s", e.Verdict, v))
		}
		return out
	}
	now := TaskFingerprint(t)
	if e.Fingerprint[fingerprintVersionKey] != fingerprintVersion {
		now = fingerprintOf(t) // recorded by a headroom that hashed host paths
	}
	out = append(out, partsChanged(e.Fingerprint, now)...)
	if e.Fingerprint[partResources] != now[partResources] && resourceLines == 0 {
		out = append(out, "resources changed")
	}
	var agents []string
	for k := range e.Fingerprint {
		if strings.HasPrefix(k, partAgentPrefix) && k != fingerprintVersionKey {
			agents = append(agents, k)
		}
	}
	slices.Sort(agents)
	for _, k := range agents {
		if v, ok := now[k]; !ok {
			out = append(out, strings.TrimPrefix(k, partAgentPrefix)+" agent removed")
		} else if v != e.Fingerprint[k] {
			out = append(out, strings.TrimPrefix(k, partAgentPrefix)+" agent's steps changed")
		}
	}
	return out
}

// partNames say each part of a fingerprint that differs, in their order.
var partNames = []struct{ part, changed string }{
	{partImage, "image or build changed"},
	{partEnvironment, "environment changed (user, network, capabilities, env, services…)"},
	{partTimeouts, "time limits changed"},
	{partVerifier, "verifier changed (its command, files or rule)"},
	{partInstruction, "instruction changed"},
}

// partsChanged says which parts of a task's definition differ between
// two fingerprints (its resources and agents aside).
func partsChanged(a, b map[string]string) []string {
	var out []string
	for _, p := range partNames {
		if a[p.part] != b[p.part] {
			out = append(out, p.changed)
		}
	}
	return out
}
