// Command etcd is the local cluster's etcd (kube/up.sh): etcd's own
// server, at the version Kubernetes v1.34.4 pins (its go.mod, through this
// module's), built here like the Kubernetes binaries. Debian bookworm's
// etcd-server is 3.4.23: the API server turns off watch progress requests
// on an etcd older than 3.4.31 (or 3.5.0-3.5.12), and with them the
// watch-list streams client-go v0.33+ asks for and the consistent reads
// from the watch cache, which a real v1.34 cluster (etcd 3.6) has.
// go install cannot build etcd's own main at a version (its go.mod has
// replace directives): this is that main.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
