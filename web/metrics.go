package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/restorewatch/restorewatch/store"
)

// metrics are the server's Prometheus metrics, on a registry of its own so
// two servers in one process (tests) do not collide. Labels hold only route
// patterns ("/instances/:name"), methods and status codes: never a path, a
// name from a server, or a token.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "restorewatch_http_requests_total", Help: "HTTP requests by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "restorewatch_http_request_duration_seconds", Help: "HTTP request latency by route pattern and method.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method"})
	// The warehouse gauges read the small series and regression tables when
	// scraped, with a deadline so a busy warehouse cannot stall the scrape.
	gauge := func(name, help string, f func(ctx context.Context) (float64, error)) prometheus.GaugeFunc {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			v, err := f(ctx)
			if err != nil {
				s.log.Warn("metrics: gauge failed", "metric", name, "error", err)
				return -1
			}
			return v
		})
	}
	m.reg.MustRegister(m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		gauge("restorewatch_restores_total", "Restores in the warehouse (as last analysed).", func(ctx context.Context) (float64, error) {
			t, err := s.totals(ctx)
			return float64(t.Restores), err
		}),
		gauge("restorewatch_instances", "Instances in the warehouse.", func(ctx context.Context) (float64, error) {
			t, err := s.totals(ctx)
			return float64(t.Instances), err
		}),
		gauge("restorewatch_open_regressions", "Regressions with status open.", func(ctx context.Context) (float64, error) {
			rs, err := s.regressions(ctx)
			return float64(len(withStatus(rs, store.StatusOpen))), err
		}),
		// Watching the watcher: deliveries stuck retrying, or waiting.
		gauge("restorewatch_alert_deliveries_retrying", "Alert deliveries whose last attempt failed (see /alerts).", func(ctx context.Context) (float64, error) {
			n, err := s.db.AlertDeliveryCounts(ctx)
			return float64(n[store.DeliveryRetrying]), err
		}),
		gauge("restorewatch_alert_deliveries_pending", "Alert deliveries waiting for their first attempt or their digest.", func(ctx context.Context) (float64, error) {
			n, err := s.db.AlertDeliveryCounts(ctx)
			return float64(n[store.DeliveryPending]), err
		}),
	)
	return m
}

// middleware counts and times every request under its route pattern.
func (m *metrics) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		route := c.Path()
		if route == "" || errors.Is(err, echo.ErrNotFound) {
			route = "unmatched"
		}
		code := c.Response().Status
		if err != nil {
			// The error handler has not run yet; take the status it will write.
			code = statusOf(err)
		}
		m.requests.WithLabelValues(route, c.Request().Method, strconv.Itoa(code)).Inc()
		m.latency.WithLabelValues(route, c.Request().Method).Observe(time.Since(start).Seconds())
		return err
	}
}

// handler serves the metrics in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
