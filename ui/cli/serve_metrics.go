package cli

import (
	gocontext "context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"syscall"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/ui/metrics"
)

// listenMetrics takes the --metrics address, or says in one line why it
// cannot: not host:port, a port that is no port, a host that does not
// resolve, or a port another process holds.
func listenMetrics(addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err)
		}
		return nil, fmt.Errorf("--metrics %q is not host:port (%v); e.g. --metrics :9464", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err == nil {
		return l, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("--metrics %s: the address is in use: another process listens on it", addr)
	}
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound {
		return nil, fmt.Errorf("--metrics %s: cannot listen: no such host %q", addr, de.Name)
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return nil, fmt.Errorf("--metrics %s: cannot listen: %v", addr, err)
}

// startMetrics starts the Monitor's refresh loop and the HTTP server on l;
// the server's end goes to errc. The returned shutdown stops both and
// waits for them; calling it again does nothing.
func startMetrics(ctx gocontext.Context, e *engine.Engine, l net.Listener, logger *slog.Logger, errc chan<- error) (func(gocontext.Context) error, error) {
	mon, err := metrics.NewMonitor(ctx, metrics.Config{
		Engine: e, Version: Version(), Log: logger,
	})
	if err != nil {
		return nil, err
	}
	mctx, cancel := gocontext.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { mon.Run(mctx) })
	srv := metrics.NewServer(mon)
	wg.Go(func() {
		if err := srv.Serve(l); err != nil {
			errc <- fmt.Errorf("metrics: %w", err)
		}
	})
	var (
		once    sync.Once
		stopErr error
	)
	return func(sctx gocontext.Context) error {
		once.Do(func() {
			stopErr = srv.Shutdown(sctx)
			cancel()
			wg.Wait()
		})
		return stopErr
	}, nil
}
