// Package store keeps experiments on disk: a manifest, trials.jsonl (one
// synced record per finished trial) and per-trial samples and logs. It is
// one more consumer of the runner's event stream.
package store
