// Package agents is where a sweep's agents come from, for both faces:
// installed-agent definitions (TOML, built in or from --agents-dir),
// rendered into a task's install and run steps; the run's agent settings
// and pass-through secrets; and how a resume rebuilds its tasks.
package agents
