// Package web serves the status page, its JSON API and, beside them,
// Prometheus /metrics, on one listener: server-rendered HTML a person can
// read without JavaScript, small uPlot plots drawn from the history, and
// every view read from the bus on request (nothing polls at idle).
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/zwatch/zwatch/fleet"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
)

// View is what the page reads about the hosts; *statusview.Reader is one.
type View interface {
	Hosts(ctx context.Context) ([]statusview.HostSummary, error)
	Host(ctx context.Context, host string) (statusview.Host, error)
	LocalHost() string
}

// History is what the plots and /api/history read; *history.Store is one.
type History interface {
	Query(ctx context.Context, host, source string, from, to time.Time) (history.Result, error)
	Events(ctx context.Context, host string, from, to time.Time, kinds ...string) ([]history.Event, error)
}

// Options configures Serve.
type Options struct {
	Config config.HTTPConfig
	View   View
	// History is nil when history is off: the page then draws no plots.
	History History
	// Metrics serves /metrics; nil: no /metrics.
	Metrics http.Handler
	// Engine reads how fleet servers share the rule engine
	// (fleet.Status): shown on the page and at /api/fleet. nil on one
	// machine, whose one engine has nothing to show.
	Engine func(ctx context.Context) (*fleet.EngineStatus, error)
	// Answers, when set with http.users, serves /answer: signed links from
	// notifications answer incidents (answer.go). Optional.
	Answers *AnswerOptions
	Version string
	Log     *slog.Logger
	// Ready, when set, is called once the listener is up with its address.
	Ready func(net.Addr)
}

// Limits of one request: slow or huge requests must not hold the daemon's
// memory or goroutines.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 16 << 10
	// viewTimeout bounds each request's reads from the bus.
	viewTimeout = 10 * time.Second
	// shutdownGrace is how long requests in flight may finish on shutdown.
	shutdownGrace = 5 * time.Second
)

// Serve listens on o.Config.Listen and serves until ctx ends, then shuts
// down gracefully.
func Serve(ctx context.Context, o Options) error {
	if o.View == nil {
		return errors.New("status page: no view of the bus to serve")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	h, err := NewHandler(o)
	if err != nil {
		return err
	}
	ln, tlsConf, err := listen(o.Config)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(o.Log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		TLSConfig:         tlsConf,
	}
	o.Log.Info("status page listening", "url", scheme+"://"+ln.Addr().String()+"/",
		"tls", scheme == "https", "login", len(o.Config.Users) > 0)
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	served := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			served <- srv.ServeTLS(ln, "", "")
			return
		}
		served <- srv.Serve(ln)
	}()
	select {
	case err := <-served:
		return fmt.Errorf("status page on %s: %w", o.Config.Listen, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("status page on %s: %w", o.Config.Listen, err)
	}
	return nil
}

// listen opens the TCP listener, with the TLS config when a certificate is set.
func listen(c config.HTTPConfig) (net.Listener, *tls.Config, error) {
	if c.Listen == "" {
		return nil, nil, errors.New("status page: http.listen is empty (off), nothing to serve")
	}
	var tlsConf *tls.Config
	if c.TLS.Cert != "" || c.TLS.Key != "" {
		cert, err := tls.LoadX509KeyPair(c.TLS.Cert, c.TLS.Key)
		if err != nil {
			return nil, nil, fmt.Errorf("status page: http.tls cert %s and key %s: %w", c.TLS.Cert, c.TLS.Key, err)
		}
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("status page: listen on http.listen %s: %w (is another zwatch or program using the port?)", c.Listen, err)
	}
	return ln, tlsConf, nil
}
