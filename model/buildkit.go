package model

// NeedsBuildKit lists the images of a task whose Dockerfile the engine's
// classic builder refuses, each with the first such construct ("image:
// Dockerfile:4: heredoc in RUN", "service db: ..."): what `tasks audit`
// says of the builder a task needs.
func (t *Task) NeedsBuildKit() []string {
	return t.eachBuild(func(b *Build) string { return b.NeedsBuildKit })
}

// ClassicDiffers lists, as NeedsBuildKit, the images whose Dockerfile
// the classic builder would build otherwise than BuildKit does
// (Build.ClassicDiffers).
func (t *Task) ClassicDiffers() []string {
	return t.eachBuild(func(b *Build) string { return b.ClassicDiffers })
}

// Builds are the task's images built from a Dockerfile: its own, its
// services', its separate verifier's, in that order.
func (t *Task) Builds() []*Build {
	var out []*Build
	if t.Build != nil {
		out = append(out, t.Build)
	}
	for _, sc := range t.Sidecars {
		if sc.Build != nil {
			out = append(out, sc.Build)
		}
	}
	if v := t.SeparateVerifier; v != nil && v.Build != nil {
		out = append(out, v.Build)
	}
	return out
}

// eachBuild is what says of each of the task's builds, named by whose
// image it is, where it says something.
func (t *Task) eachBuild(says func(*Build) string) []string {
	var out []string
	if t.Build != nil && says(t.Build) != "" {
		out = append(out, "image: "+says(t.Build))
	}
	for _, sc := range t.Sidecars {
		if sc.Build != nil && says(sc.Build) != "" {
			out = append(out, "service "+sc.Name+": "+says(sc.Build))
		}
	}
	if v := t.SeparateVerifier; v != nil && v.Build != nil && says(v.Build) != "" {
		out = append(out, "verifier: "+says(v.Build))
	}
	return out
}
