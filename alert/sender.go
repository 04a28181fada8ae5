package alert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Config is the alerting configuration ([alerts] in the TOML).
type Config struct {
	// BaseURL is the dashboard's address as readers reach it; it makes
	// the evidence links absolute.
	BaseURL string
	// Interval is the time between the sender's passes (30 s when zero);
	// GroupWait how long after its creation an alert waits for others to
	// go with it (none when zero; the TOML's default is 30 s), so that one
	// import's alerts are one message.
	Interval  time.Duration
	GroupWait time.Duration
	// GroupInterval is the least time between two messages a channel
	// sends at once (none when zero; the TOML's default is 5 min): an
	// import whose analysis queues regressions for ten minutes is a few
	// messages, not one each pass.
	GroupInterval time.Duration
	// Location is the zone of routes' hours and digests (time.Local).
	Location *time.Location
	// Immediate overrides DefaultImmediate.
	Immediate []string
	Channels  []ChannelConfig
	Routes    []Route
	// Backoff is the first retry's delay (5 s when zero), doubled each
	// attempt up to MaxBackoff (15 min when zero), jittered.
	Backoff, MaxBackoff time.Duration
	// BatchSize is how many alerts one message carries at most (500 when
	// zero).
	BatchSize int
	// Lease is how long a sender holds the deliveries it is sending (2 min
	// when zero): another sender on the warehouse leaves them alone that
	// long, and after a crash they are sent again once it ends.
	Lease time.Duration
	// Conditions is how often the conditions (RTO, knees, silence,
	// failing collectors) are evaluated (5 min when zero).
	Conditions time.Duration
	// KeepDays is how long alerts whose deliveries are over are kept
	// (0: for ever).
	KeepDays int
	// SilentPasses and FailingPasses: an instance or zone silent for this
	// many collector intervals, a collector failing this many passes in a
	// row (3 when zero).
	SilentPasses, FailingPasses int
}

// Validate checks channels and routes.
func (c *Config) Validate() error {
	names := map[string]bool{}
	for i := range c.Channels {
		ch := &c.Channels[i]
		if err := ch.Validate(); err != nil {
			return err
		}
		if names[ch.Name] {
			return fmt.Errorf("alerts: two channels are named %s", ch.Name)
		}
		names[ch.Name] = true
	}
	for i := range c.Routes {
		if err := c.Routes[i].Validate(names); err != nil {
			return err
		}
	}
	for _, k := range c.Immediate {
		if k == "" {
			return errors.New("alerts: an empty event kind in immediate")
		}
	}
	return nil
}

// Store is what the sender needs of the warehouse; *sqlite.DB has it.
type Store interface {
	RouteAlerts(ctx context.Context, limit int, route func(*store.Alert) []store.AlertDelivery) (int, error)
	AlertTags(ctx context.Context, instance string) (map[string]string, error)
	ClaimDeliveries(ctx context.Context, channel, mode string, now, horizon time.Time, lease time.Duration, limit int) ([]store.Alert, error)
	MarkDeliveries(ctx context.Context, channel string, rs []store.DeliveryResult) error
	Silences(ctx context.Context, since time.Time) ([]store.AlertSilence, error)
	PruneAlerts(ctx context.Context, before time.Time) (int64, error)
}

// Sender routes the outbox's new events and delivers what is due.
type Sender struct {
	cfg      Config
	db       Store
	log      *slog.Logger
	channels []Channel
	now      func() time.Time
	// Evaluate, when set, adds the conditions' events to the outbox; the
	// loop calls it every Config.Conditions.
	Evaluate func(ctx context.Context) error

	mu       sync.Mutex
	lastSent map[string]time.Time // per channel, the last message sent at once
}

// groupReady says whether channel may send a message at once: its last
// one is at least GroupInterval old.
func (s *Sender) groupReady(channel string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.lastSent[channel]
	return !ok || now.Sub(last) >= s.cfg.GroupInterval || now.Before(last)
}

func (s *Sender) groupSent(channel string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastSent == nil {
		s.lastSent = map[string]time.Time{}
	}
	s.lastSent[channel] = now
}

// NewSender makes the sender of cfg over db.
func NewSender(cfg Config, db Store, log *slog.Logger) (*Sender, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sender{cfg: cfg, db: db, log: log, now: time.Now}
	for _, cc := range cfg.Channels {
		ch, err := NewChannel(cc)
		if err != nil {
			return nil, err
		}
		s.channels = append(s.channels, ch)
	}
	return s, nil
}

// routeLimit is how many events one routing transaction takes.
const routeLimit = 500

func (s *Sender) batchSize() int {
	if s.cfg.BatchSize > 0 {
		return s.cfg.BatchSize
	}
	return 500
}

// Stats counts what a pass did.
type Stats struct {
	Routed, Sent, Failed, Silenced, Messages int
}

// Pass routes every new event and delivers every due one, each channel on
// its own goroutine so a slow receiver holds up only its own channel.
func (s *Sender) Pass(ctx context.Context) (Stats, error) {
	var st Stats
	now := s.now()
	tags := map[string]map[string]string{}
	var tagErr error
	route := func(a *store.Alert) []store.AlertDelivery {
		t, ok := tags[a.Instance]
		if !ok && a.Instance != "" {
			var err error
			if t, err = s.db.AlertTags(ctx, a.Instance); err != nil {
				tagErr = err
			}
			tags[a.Instance] = t
		}
		return s.cfg.deliveries(a, t, now)
	}
	for {
		n, err := s.db.RouteAlerts(ctx, routeLimit, route)
		if err == nil {
			err = tagErr
		}
		if err != nil {
			return st, err
		}
		st.Routed += n
		if n < routeLimit {
			break
		}
	}
	sil, err := s.db.Silences(ctx, now)
	if err != nil {
		return st, err
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for _, ch := range s.channels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := s.deliver(ctx, ch, now, sil)
			mu.Lock()
			defer mu.Unlock()
			st.Sent, st.Failed, st.Silenced, st.Messages = st.Sent+cs.Sent, st.Failed+cs.Failed, st.Silenced+cs.Silenced, st.Messages+cs.Messages
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return st, errors.Join(errs...)
}

// deliver sends the channel's due alerts, at once and digests, in batches.
func (s *Sender) deliver(ctx context.Context, ch Channel, now time.Time, sil []store.AlertSilence) (Stats, error) {
	var st Stats
	for _, mode := range []string{store.ModeNow, store.ModeDigest} {
		horizon := now
		if mode == store.ModeNow {
			// One message a group interval: when one alert is due, the
			// alerts queued since (a stream of an import's findings) go
			// with it rather than one message each pass.
			if !s.groupReady(ch.Name(), now) {
				continue
			}
			horizon = now.Add(s.cfg.GroupWait)
		}
		for range 20 { // at most 20 messages a pass and mode: the next pass goes on
			due, err := s.db.ClaimDeliveries(ctx, ch.Name(), mode, now, horizon, s.lease(), s.batchSize())
			if err != nil || len(due) == 0 {
				if err != nil {
					return st, err
				}
				break
			}
			var rs []store.DeliveryResult
			var send []store.Alert
			for i := range due {
				a := &due[i]
				if note := held(a, sil, now); note != "" {
					rs = append(rs, store.DeliveryResult{AlertID: a.ID, State: store.DeliverySilenced, Note: note})
					st.Silenced++
					continue
				}
				send = append(send, *a)
			}
			if len(send) > 0 {
				b := &Batch{Alerts: send, Digest: mode == store.ModeDigest, BaseURL: s.cfg.BaseURL, Now: now}
				sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				err := ch.Send(sctx, b)
				cancel()
				st.Messages++
				if ctx.Err() != nil {
					// Stopped while sending: nothing is marked, the next run
					// sends the batch again.
					return st, ctx.Err()
				}
				for i := range send {
					a := &send[i]
					if err == nil {
						rs = append(rs, store.DeliveryResult{AlertID: a.ID, State: store.DeliverySent})
						continue
					}
					rs = append(rs, store.DeliveryResult{AlertID: a.ID, State: store.DeliveryRetrying, Error: err.Error(),
						NextAt: now.Add(s.backoff(a.Deliveries[0].Attempts))})
				}
				if err == nil {
					if mode == store.ModeNow {
						s.groupSent(ch.Name(), now)
					}
					st.Sent += len(send)
					s.log.Info("alerts sent", "channel", ch.Name(), "alerts", len(send), "mode", mode)
				} else {
					st.Failed += len(send)
					s.log.Warn("alerts not delivered, will retry", "channel", ch.Name(), "alerts", len(send), "error", err.Error())
				}
			}
			// Marked only now, after the receiver answered: a crash before
			// this line leaves them due, and they are sent again.
			if err := s.db.MarkDeliveries(context.WithoutCancel(ctx), ch.Name(), rs); err != nil {
				return st, err
			}
			if len(due) < s.batchSize() || st.Failed > 0 {
				break
			}
		}
	}
	return st, nil
}

// held says why an alert is held back ("" when it is not): acknowledged,
// or silenced.
func held(a *store.Alert, sil []store.AlertSilence, now time.Time) string {
	if a.AckedBy != "" {
		return "acknowledged by " + a.AckedBy + ": " + a.AckNote
	}
	for i := range sil {
		if sil[i].Matches(&a.AlertEvent, now) {
			s := &sil[i]
			return fmt.Sprintf("silenced by %s until %s: %s", s.By, s.Until.UTC().Format("2006-01-02 15:04 UTC"), s.Why)
		}
	}
	return ""
}

func (s *Sender) lease() time.Duration {
	if s.cfg.Lease > 0 {
		return s.cfg.Lease
	}
	return 2 * time.Minute
}

// backoff is the delay before the attempt after attempts failed ones.
func (s *Sender) backoff(attempts int) time.Duration {
	base, top := s.cfg.Backoff, s.cfg.MaxBackoff
	if base <= 0 {
		base = 5 * time.Second
	}
	if top <= 0 {
		top = 15 * time.Minute
	}
	d := base
	for range attempts {
		if d >= top {
			break
		}
		d *= 2
	}
	d = min(d, top)
	return d - d/5 + time.Duration(rand.Int64N(int64(d/5)*2+1)) // ±20 %
}

// Run routes and delivers every Interval, and evaluates the conditions
// every Conditions on a goroutine of its own (an RTO projection of a large
// estate takes a while; it never holds up a delivery), until ctx ends.
func (s *Sender) Run(ctx context.Context) {
	every := s.cfg.Interval
	if every <= 0 {
		every = 30 * time.Second
	}
	var wg sync.WaitGroup
	if s.Evaluate != nil {
		cond := s.cfg.Conditions
		if cond <= 0 {
			cond = 5 * time.Minute
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick(ctx, cond, func() {
				if err := s.Evaluate(ctx); err != nil && ctx.Err() == nil {
					s.log.Error("alert conditions", "error", err.Error())
				}
			})
		}()
	}
	var pruned time.Time
	tick(ctx, every, func() {
		if _, err := s.Pass(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("alerts", "error", err.Error())
		}
		if s.cfg.KeepDays > 0 && time.Since(pruned) > time.Hour {
			pruned = time.Now()
			n, err := s.db.PruneAlerts(ctx, s.now().AddDate(0, 0, -s.cfg.KeepDays))
			if err != nil && ctx.Err() == nil {
				s.log.Error("alerts retention", "error", err.Error())
			} else if n > 0 {
				s.log.Info("alerts retention", "alerts", n)
			}
		}
	})
	wg.Wait()
}

// tick calls f at once and then every d until ctx ends.
func tick(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		f()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Test sends one test message to every channel and returns each
// channel's error (nil: delivered).
func (s *Sender) Test(ctx context.Context) map[string]error {
	out := map[string]error{}
	for _, ch := range s.channels {
		now := s.now()
		b := &Batch{Alerts: []store.Alert{TestAlert(ch.Name(), now)}, BaseURL: s.cfg.BaseURL, Now: now}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out[ch.Name()] = ch.Send(sctx, b)
		cancel()
	}
	return out
}

// SetClock replaces the sender's clock (tests jump to the digest hour).
func (s *Sender) SetClock(now func() time.Time) { s.now = now }

// Channels names the configured channels in order.
func (s *Sender) Channels() []string {
	var out []string
	for _, ch := range s.channels {
		out = append(out, ch.Name())
	}
	return out
}
