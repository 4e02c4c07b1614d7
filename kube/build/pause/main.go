// Command pause is the pod sandbox's process for kube/up.sh's cluster: no
// registry can be reached here, so registry.k8s.io/pause cannot be pulled.
// Like it, it sleeps until SIGTERM or SIGINT and reaps the children it
// inherits when the pod shares one process namespace.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
