package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

// TestAlertsPage: each alert with its channels' states — sent, retrying
// with the error, silenced by whom — and the forms that acknowledge an
// alert and silence an instance, which keep who and why.
func TestAlertsPage(t *testing.T) {
	ctx := t.Context()
	db := storetest.Open(t)
	now := time.Now()
	mk := func(key, inst, title string) store.AlertEvent {
		return store.AlertEvent{Key: key, Kind: store.AlertRegressionConfirmed, Severity: store.SeverityCritical, Instance: inst,
			Title: title, Summary: "Median 800 MiB/s before, 320 since.", NextStep: "Check the source build.",
			Link: "/regressions/1", Since: now.Add(-time.Hour)}
	}
	if err := db.EnqueueAlerts(ctx, mk("k1", "SQL01", "Full restores of <b>Sales</b> slowed 2.5×"), mk("k2", "SQL02", "Log restores of HR slowed 3×")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RouteAlerts(ctx, 10, func(a *store.Alert) []store.AlertDelivery {
		return []store.AlertDelivery{{Channel: "mail", Mode: store.ModeNow, NextAt: now}, {Channel: "hook", Mode: store.ModeNow, NextAt: now}}
	}); err != nil {
		t.Fatal(err)
	}
	as, _ := db.Alerts(ctx, store.AlertFilter{})
	byKey := map[string]int64{}
	for _, a := range as {
		byKey[a.Key] = a.ID
	}
	if err := db.MarkDeliveries(ctx, "mail", []store.DeliveryResult{{AlertID: byKey["k1"], State: store.DeliverySent}}); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkDeliveries(ctx, "hook", []store.DeliveryResult{{AlertID: byKey["k1"], State: store.DeliveryRetrying,
		NextAt: now.Add(time.Minute), Error: "receiver answered 503 Service Unavailable: busy"}}); err != nil {
		t.Fatal(err)
	}
	_, ts := serve(t, web.Config{DB: db, Now: time.Now})
	c := client(t)
	code, body, _ := get(t, c, ts.URL+"/alerts")
	if code != http.StatusOK {
		t.Fatalf("/alerts: %d", code)
	}
	for _, want := range []string{"Full restores of &lt;b&gt;Sales&lt;/b&gt; slowed 2.5×", "503 Service Unavailable: busy", "mail</strong> sent",
		"hook</strong> retrying", "Next step: Check the source build.", `href="/regressions/1"`, `href="/alerts"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/alerts lacks %q", want)
		}
	}
	tok := csrf(t, c, ts.URL)
	resp := postForm(t, c, ts.URL+"/alerts/"+itoa64(byKey["k2"])+"/ack", url.Values{"by": {"ana"}, "why": {"known: SAN migration"}, "_csrf": {tok}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("ack: %d", resp.StatusCode)
	}
	resp = postForm(t, c, ts.URL+"/alerts/silences", url.Values{"instance": {"SQL0*"}, "for": {"2d"}, "by": {"bo"}, "why": {"patch weekend"}, "_csrf": {tok}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("silence: %d", resp.StatusCode)
	}
	resp = postForm(t, c, ts.URL+"/alerts/silences", url.Values{"for": {"2d"}, "by": {"bo"}, "why": {"everything"}, "_csrf": {tok}}, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a silence of everything: %d, want 400", resp.StatusCode)
	}
	_, body, _ = get(t, c, ts.URL+"/alerts")
	for _, want := range []string{"acknowledged by ana: known: SAN migration", "instance SQL0*", "patch weekend", "hook</strong> silenced"} {
		if !strings.Contains(body, want) {
			t.Errorf("/alerts after ack and silence lacks %q", want)
		}
	}
	_, metrics, _ := get(t, c, ts.URL+"/metrics")
	if !strings.Contains(metrics, "restorewatch_alert_deliveries_retrying 1") || !strings.Contains(metrics, "restorewatch_alert_deliveries_pending 0") {
		t.Errorf("/metrics lacks the alert deliveries' gauges:\n%s", metrics)
	}
	if code, _, _ := get(t, c, ts.URL+"/alerts?kind=bogus"); code != http.StatusBadRequest {
		t.Errorf("/alerts?kind=bogus: %d", code)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// TestAlertsPageOnTheDemo: the demo's analysis queued its confirmed
// regressions; /alerts lists them in words, each linking its evidence page.
func TestAlertsPageOnTheDemo(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	code, body, _ := get(t, client(t), ts.URL+"/alerts")
	if code != http.StatusOK || !strings.Contains(body, "regression confirmed") || !strings.Contains(body, `href="/regressions/`) ||
		!strings.Contains(body, "not routed to any channel") {
		t.Errorf("/alerts on the demo: %d\n%.2000s", code, body)
	}
}
