// Package importer reads other harnesses' finished runs (Harbor job
// directories, terminal-bench 1 run directories) into headroom trial
// records, so their results open in the matrix, the statistics, compare,
// the report and the console's History like any experiment.
package importer
