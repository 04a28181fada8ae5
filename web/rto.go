package web

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// The overview's RTO projection uses the restore plans' chain logic for
// every database with a backup history: the time to restore it to its
// latest backup is the plan's total (the full, the differential and every
// log after it, each at the measured speed of its kind and device), not
// the size of the last full restore over its speed. Databases without a
// backup history keep the size-based projection.

// backupDatabases is what the overview needs of the warehouse's backup
// history, when it has one.
type backupDatabases interface {
	BackupDatabases(ctx context.Context) (map[string]bool, error)
}

// planRTO is one database's projection from its restore plan.
type planRTO struct {
	expected time.Duration
	broken   bool // the log chain is broken before the latest backup
}

// planProjections projects every candidate with a backup history; ok is
// false when the warehouse keeps none.
func (s *Server) planProjections(ctx context.Context, cs []store.RTOCandidate) (map[int]planRTO, error) {
	bd, ok := s.db.(backupDatabases)
	src, ok2 := s.db.(plan.Source)
	if !ok || !ok2 {
		return nil, nil
	}
	have, err := bd.BackupDatabases(ctx)
	if err != nil || len(have) == 0 {
		return nil, err
	}
	cached := &cachedPlanSource{Source: src, rates: map[rateKey][]store.RestoreRate{}}
	out := map[int]planRTO{}
	for i, c := range cs {
		if !have[strings.ToLower(c.Instance)+"\x00"+c.Database] {
			continue
		}
		p, _, err := plan.Make(ctx, cached, plan.Request{Instance: c.Instance, Database: c.Database})
		var gap *plan.GapError
		switch {
		case errors.As(err, &gap):
			out[i] = planRTO{broken: true}
		case err != nil:
			if store.ErrorCode(err) == store.EINTERNAL {
				return nil, err
			}
		case p.Unestimated == 0 && p.TotalS > 0:
			out[i] = planRTO{expected: time.Duration(p.TotalS * float64(time.Second))}
		}
	}
	return out, nil
}

type rateKey struct {
	instance string
	fleet    bool
	perKind  int
}

// cachedPlanSource reads each instance's measured rates and tags once for
// all the plans of one overview.
type cachedPlanSource struct {
	plan.Source
	mu    sync.Mutex
	rates map[rateKey][]store.RestoreRate
}

func (c *cachedPlanSource) RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error) {
	k := rateKey{strings.ToLower(instance), fleet, perKind}
	c.mu.Lock()
	r, ok := c.rates[k]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := c.Source.RestoreRates(ctx, instance, fleet, perKind)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.rates[k] = r
	c.mu.Unlock()
	return r, nil
}
