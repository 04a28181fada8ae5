package web

import (
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/labstack/echo/v4"
)

// routes registers every route of the dashboard, in one place.
func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The server trusts no proxy header unless the peer is a trusted
	// proxy: otherwise a client could choose its own rate-limit bucket.
	e.IPExtractor = clientIP(s.cfg.TrustedProxies)
	e.HTTPErrorHandler = s.handleError
	e.Pre(rawPath, boundedQuery)
	// Before anything reads a body or sets a cookie: the Host must be this
	// server's, the headers' token right, a write same-origin.
	e.Use(secureHeaders, s.metrics.middleware, s.recover, reserved, noBody, s.checkHost, s.authenticate, s.sameOrigin, csrfToken)

	// Pages (SPEC §6.3).
	e.GET("/", s.handleOverview)
	e.GET("/restores", s.handleRestores)
	e.GET("/restores.csv", s.handleRestoresCSV)
	e.GET("/restores/:id", s.handleRestore)
	e.GET("/instances", s.handleInstances)
	e.GET("/instances/:name", s.handleInstance)
	e.GET("/instances/:name/databases/:db", s.handleDatabase)
	e.GET("/regressions", s.handleRegressions)
	e.GET("/regressions/:id", s.handleRegression)
	e.POST("/regressions/:id/status", s.handleRegressionStatus,
		rateLimit(s.writes, "Too many changes from this address; wait a few seconds and try again."), s.requireWrite)
	e.GET("/builds", s.handleBuilds)
	e.GET("/compare", s.handleCompare)
	e.GET("/live", s.handleLive)
	e.GET("/collector", s.handleCollector)
	e.GET("/alerts", s.handleAlerts)
	e.POST("/alerts/:id/ack", s.handleAlertAck,
		rateLimit(s.writes, "Too many changes from this address; wait a few seconds and try again."), s.requireWrite)
	e.POST("/alerts/silences", s.handleSilence,
		rateLimit(s.writes, "Too many changes from this address; wait a few seconds and try again."), s.requireWrite)
	e.POST("/alerts/silences/:id/end", s.handleEndSilence,
		rateLimit(s.writes, "Too many changes from this address; wait a few seconds and try again."), s.requireWrite)
	e.GET("/reports/regressions/:id", s.handleRegressionReport)
	e.GET("/reports/builds", s.handleBuildReport)
	e.GET("/import", s.handleImportForm)
	e.POST("/import", s.handleImport,
		rateLimit(s.imports, "Too many uploads from this address; wait a few seconds and try again."), limitBody(s.cfg.MaxUpload))
	e.GET("/theme", s.handleTheme)

	// JSON API (SPEC §6.4), health and metrics.
	e.GET("/api/restores", s.handleAPIRestores)
	e.GET("/api/regressions", s.handleAPIRegressions)
	e.GET("/api/instances", s.handleAPIInstances)
	e.GET("/api/builds", s.handleAPIBuilds)
	e.GET("/api/knees", s.handleAPIKnees)
	e.POST(pushPath, s.handlePush)
	e.GET("/healthz", s.handleHealth)
	e.GET("/metrics", echo.WrapHandler(s.metrics.handler()))

	// Embedded assets.
	e.GET("/static/app.css", s.handleAsset(s.css, "text/css; charset=utf-8"))
	e.GET("/static/report.css", s.handleAsset(s.report, "text/css; charset=utf-8"))
	e.GET("/static/copy.js", s.handleAsset(s.copyJS, "text/javascript; charset=utf-8"))
	e.GET("/static/favicon.svg", s.handleFavicon)
	e.GET("/favicon.ico", s.handleFavicon) // browsers ask for it whatever the page says
	e.GET("/instances/:name/databases/:db/plan", s.handlePlan)
	e.GET("/instances/:name/databases/:db/plan.sql", s.handlePlanSQL)
	e.GET("/api/plan", s.handleAPIPlan)
	return e
}

// recover turns a panicking handler into an internal error (logged with
// its stack by the error handler's caller) instead of a dropped connection.
func (s *Server) recover(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.Error("handler panicked", "route", c.Path(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}
