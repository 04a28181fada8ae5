package collector

import (
	"context"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
)

// sample follows the restores running on an instance every inflight
// interval on the pass's open session, until none runs, the next pass is
// due, the session fails or ctx ends. Each sample takes a query slot like a
// pass does and has its own deadline.
func (c *collector) sample(ctx context.Context, in mssql.Instance, sess *mssql.Session, next time.Time) {
	every := c.cfg.InflightInterval
	for time.Until(next) > every {
		if !sleep(ctx, every) {
			return
		}
		// The instance's timeout, like every query: a sample that takes
		// longer than the interval only delays the next one, while a
		// deadline of one interval ended the sampling of a busy server.
		sctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		if !acquire(sctx, c.slot) {
			cancel()
			continue
		}
		samples, err := sess.Inflight(sctx)
		<-c.slot
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.log.Warn("in-flight sample failed", "instance", in.Name, "error", err.Error())
			if mssql.IsFatal(err) {
				return
			}
			continue
		}
		if err := c.db.AddInflightSamples(context.WithoutCancel(ctx), in.Name, samples); err != nil {
			c.storeFailed(err)
			return
		}
		if len(samples) == 0 {
			return
		}
	}
}
