package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// streamer runs a pod's exec or attach stream; a test replaces it.
type streamer interface {
	// Exec runs argv in the container with the given streams and returns
	// its exit code (an error only when it could not be run or followed).
	Exec(ctx context.Context, pod, container string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error)
	// Attach streams the container's PID 1's stdin and stdout until ctx
	// ends or the container does.
	Attach(ctx context.Context, pod, container string, stdin io.Reader, stdout, stderr io.Writer) error
}

// remote is the API server's exec and attach: websocket, falling back to
// SPDY where a proxy or an older server refuses the upgrade.
type remote struct {
	cfg *rest.Config
	rc  rest.Interface
	ns  string
}

func (r remote) stream(ctx context.Context, u *url.URL, o remotecommand.StreamOptions) error {
	ws, err := remotecommand.NewWebSocketExecutor(r.cfg, "GET", u.String())
	if err != nil {
		return err
	}
	spdy, err := remotecommand.NewSPDYExecutor(r.cfg, "POST", u)
	if err != nil {
		return err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, o)
}

func (r remote) Exec(ctx context.Context, pod, container string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	req := r.rc.Post().Resource("pods").Namespace(r.ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container, Command: argv,
			Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil,
		}, scheme.ParameterCodec)
	err := r.stream(ctx, req.URL(), remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var ce utilexec.CodeExitError
	if errors.As(err, &ce) {
		return ce.ExitStatus(), nil
	}
	var ee utilexec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitStatus(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("exec in pod %s: %w", pod, err)
	}
	return 0, nil
}

func (r remote) Attach(ctx context.Context, pod, container string, stdin io.Reader, stdout, stderr io.Writer) error {
	req := r.rc.Post().Resource("pods").Namespace(r.ns).Name(pod).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{
			Container: container, Stdin: stdin != nil, Stdout: true, Stderr: stderr != nil,
		}, scheme.ParameterCodec)
	return r.stream(ctx, req.URL(), remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}
