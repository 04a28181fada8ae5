package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/web"
)

// TokenCmd manages the tokens of collectors that push to this warehouse's
// serve from other network zones (collect --push).
type TokenCmd struct {
	Create TokenCreateCmd `cmd:"" help:"Make the token of a collector that pushes (collect --push) and print it once; only its hash is kept."`
	List   TokenListCmd   `cmd:"" help:"List the collectors' tokens: names and dates, never the tokens."`
	Revoke TokenRevokeCmd `cmd:"" help:"Revoke a collector's token: its next push is refused."`
}

// TokenCreateCmd makes a collector token.
type TokenCreateCmd struct {
	Name      string   `arg:"" help:"The collector's name: letters, digits, '.', '_' and '-'."`
	Instances []string `arg:"" optional:"" name:"instance" help:"The instances the collector may write: names or patterns ('*' any run of characters, '?' one), e.g. 'SQL-B-*'. None: the instances it writes first, if this server has none of them yet."`
	AGs       []string `name:"ag" help:"An availability group whose replicas in this collector's zone a restore plan may merge with other zones' replicas of it (the operator's word; repeat for several). Without it the zone's AG, listener and family-GUID claims join only its own instances."`
}

// Run implements the command.
func (c *TokenCreateCmd) Run(ctx context.Context, m *Main) error {
	if err := store.ValidCollectorName(c.Name); err != nil {
		return usageError{err}
	}
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	tok, err := db.CreateCollectorToken(ctx, c.Name, c.Instances...)
	if err != nil {
		return err
	}
	if len(c.AGs) > 0 {
		if err := db.SetCollectorAGs(ctx, c.Name, c.AGs); err != nil {
			_ = db.RevokeCollectorToken(ctx, c.Name)
			return err
		}
	}
	fmt.Fprintln(m.Stdout, tok)
	scope := "the instances it writes first (none this server already holds)"
	if len(c.Instances) > 0 {
		scope = "instances matching " + strings.Join(printables(c.Instances), ", ") + " that no other collector or local import holds"
	}
	fmt.Fprintf(m.Stderr, "collector %s may write %s.\n", c.Name, scope)
	if len(c.AGs) > 0 {
		fmt.Fprintf(m.Stderr, "its replicas of %s may join other zones' in restore plans.\n", strings.Join(printables(c.AGs), ", "))
	}
	fmt.Fprintf(m.Stderr, "token of collector %s: shown this once, only its hash is kept.\n"+
		"On the collector: save it to a file only its account reads (chmod 600) and run\n"+
		"  restorewatch collect --config FILE --push https://THIS-SERVER:PORT --push-token-file TOKENFILE\n", c.Name)
	return nil
}

// TokenListCmd lists collector tokens.
type TokenListCmd struct{}

// Run implements the command.
func (c *TokenListCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	ts, err := db.CollectorTokens(ctx)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		fmt.Fprintln(m.Stderr, "no collector tokens: restorewatch token create NAME makes one")
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COLLECTOR\tSTATE\tCREATED\tLAST PUSH\tMAY WRITE\tINSTANCES\tAGS ACROSS ZONES")
	for _, t := range ts {
		state := "valid"
		if t.Revoked != nil {
			state = "revoked " + stamp(t.Revoked)
		}
		may := "its first-written"
		if len(t.Instances) > 0 {
			may = strings.Join(printables(t.Instances), ",")
		}
		claimed := "-"
		if len(t.Claimed) > 0 {
			claimed = strings.Join(printables(t.Claimed), ",")
		}
		ags := "-"
		if len(t.AGs) > 0 {
			ags = strings.Join(printables(t.AGs), ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(t.Name), state, stamp(&t.Created), stamp(t.Used), may, claimed, ags)
	}
	return tw.Flush()
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// TokenRevokeCmd revokes a collector token.
type TokenRevokeCmd struct {
	Name string `arg:"" help:"The collector's name."`
}

// Run implements the command.
func (c *TokenRevokeCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	if err := db.RevokeCollectorToken(ctx, c.Name); err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "revoked the token of collector %s: its next push is refused (a running serve checks each push)\n", c.Name)
	return nil
}

// pushSink adapts ingest/push's receiver to web.PushSink (web does not
// import ingest).
type pushSink struct{ *push.Receiver }

func newPushSink(db store.Warehouse, opt analysis.Options, log *slog.Logger) pushSink {
	return pushSink{push.NewReceiver(db, ingest.LoaderOptions{Analysis: opt}, log)}
}

// Push implements web.PushSink.
func (p pushSink) Push(ctx context.Context, collector string, batch io.Reader) (web.PushResult, error) {
	r, err := p.Receiver.Push(ctx, collector, batch)
	return web.PushResult(r), err
}
