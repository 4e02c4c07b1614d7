package model

// NeedsBuildKit lists the images of a task whose Dockerfile the engine's
// classic builder refuses, each with the first such construct ("image:
// Dockerfile:4: heredoc in RUN", "service db: ..."): what `tasks audit`
// says of the builder a task needs.
func (t *Task) NeedsBuildKit() []string {
	var out []string
	if t.Build != nil && t.Build.NeedsBuildKit != "" {
		out = append(out, "image: "+t.Build.NeedsBuildKit)
	}
	for _, sc := range t.Sidecars {
		if sc.Build != nil && sc.Build.NeedsBuildKit != "" {
			out = append(out, "service "+sc.Name+": "+sc.Build.NeedsBuildKit)
		}
	}
	if v := t.SeparateVerifier; v != nil && v.Build != nil && v.Build.NeedsBuildKit != "" {
		out = append(out, "verifier: "+v.Build.NeedsBuildKit)
	}
	return out
}
