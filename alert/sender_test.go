package alert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/alert"
	"github.com/restorewatch/restorewatch/alert/alerttest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func event(kind, sev string, i int) store.AlertEvent {
	return store.AlertEvent{Key: fmt.Sprintf("%s/SQL%02d/DB%d/full", kind, i%7, i), Kind: kind, Severity: sev,
		Instance: fmt.Sprintf("SQL%02d", i%7), Database: fmt.Sprintf("DB%d", i), RestoreKind: "full",
		Title: fmt.Sprintf("Full restores of DB%d slowed 2.4×", i), Summary: "Median 800 MiB/s before, 333 MiB/s since.",
		NextStep: "Check the source build.", Link: fmt.Sprintf("/regressions/%d", i+1), Since: time.Now().Add(-time.Hour)}
}

func newSender(t *testing.T, db *sqlite.DB, cfg alert.Config) *alert.Sender {
	t.Helper()
	s, err := alert.NewSender(cfg, db, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pass(t *testing.T, s *alert.Sender) alert.Stats {
	t.Helper()
	st, err := s.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func checkOnce(t *testing.T, what string, got map[string]int, want []string) {
	t.Helper()
	for _, k := range want {
		if got[k] != 1 {
			t.Errorf("%s: key %s arrived %d times, want once", what, k, got[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d keys arrived, want %d: %v", what, len(got), len(want), got)
	}
}

// TestAlertsReachRealReceivers: confirmed regressions reach a signed
// webhook, Slack and Teams webhooks, an SMTP server over STARTTLS with
// AUTH, an anonymous relay and a real Alertmanager, once each; a watch
// waits for the digest, which is one message; a second pass sends nothing.
func TestAlertsReachRealReceivers(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	am := alerttest.StartAlertmanager(t)
	hook := alerttest.StartWebhook(t, "hmac-secret")
	slackBox, slackURL := alerttest.StartJSON(t)
	teamsBox, teamsURL := alerttest.StartJSON(t)
	tlsMail := alerttest.StartSMTP(t, true, "rw", "smtp-password")
	relay := alerttest.StartSMTP(t, false, "", "")
	cfg := alert.Config{BaseURL: "https://rw.example", Location: time.UTC, Channels: []alert.ChannelConfig{
		{Name: "hook", Type: alert.TypeWebhook, URL: hook.URL, Secret: "hmac-secret"},
		{Name: "slack", Type: alert.TypeSlack, URL: slackURL},
		{Name: "teams", Type: alert.TypeTeams, URL: teamsURL},
		{Name: "mail", Type: alert.TypeEmail, SMTPHost: tlsMail.Host, SMTPPort: tlsMail.Port, TLS: "starttls", User: "rw",
			Password: "smtp-password", From: "rw@example.com", To: []string{"dba@example.com"}, CAFile: tlsMail.CAFile},
		{Name: "relay", Type: alert.TypeEmail, SMTPHost: relay.Host, SMTPPort: relay.Port, TLS: "none",
			From: "rw@example.com", To: []string{"managers@example.com"}},
		{Name: "am", Type: alert.TypeAlertmanager, URL: am.URL},
	}}
	var now []string
	var evs []store.AlertEvent
	for i := range 3 {
		e := event(store.AlertRegressionConfirmed, store.SeverityWarning, i)
		evs, now = append(evs, e), append(now, e.Key)
	}
	watch := event(store.AlertWatchOpened, store.SeverityInfo, 9)
	evs = append(evs, watch)
	if err := db.EnqueueAlerts(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	s := newSender(t, db, cfg)
	st := pass(t, s)
	if st.Routed != 4 || st.Sent != 3*6 || st.Failed != 0 {
		t.Fatalf("first pass: %+v", st)
	}
	checkOnce(t, "webhook", hook.Keys(), now)
	if hook.BadSigned() != 0 {
		t.Errorf("%d webhook requests were badly signed", hook.BadSigned())
	}
	checkOnce(t, "SMTP with STARTTLS", tlsMail.Keys(), now)
	checkOnce(t, "SMTP relay", relay.Keys(), now)
	if hook.Messages() != 1 || tlsMail.Messages() != 1 || slackBox.Messages() != 1 || teamsBox.Messages() != 1 {
		t.Errorf("messages: webhook %d, mail %d, slack %d, teams %d; want one each (one group)",
			hook.Messages(), tlsMail.Messages(), slackBox.Messages(), teamsBox.Messages())
	}
	if tlsMail.Auths() != 1 {
		t.Errorf("SMTP logins: %d, want 1", tlsMail.Auths())
	}
	body := tlsMail.Bodies()[0]
	for _, want := range []string{"slowed 2.4", "Median 800 MiB/s", "Since: ", "Next step: Check the source build.",
		"https://rw.example/regressions/1"} {
		if !strings.Contains(body, want) {
			t.Errorf("the mail lacks %q:\n%s", want, body)
		}
	}
	var sl struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(slackBox.Bodies()[0]), &sl); err != nil || !strings.Contains(sl.Text, "3 regressions confirmed") ||
		!strings.Contains(sl.Text, "https://rw.example/regressions/2") {
		t.Errorf("slack body: %v %s", err, slackBox.Bodies()[0])
	}
	var card struct {
		Attachments []struct {
			ContentType string `json:"contentType"`
			Content     struct {
				Type string           `json:"type"`
				Body []map[string]any `json:"body"`
			} `json:"content"`
		} `json:"attachments"`
	}
	if err := json.Unmarshal([]byte(teamsBox.Bodies()[0]), &card); err != nil || len(card.Attachments) != 1 ||
		card.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" || card.Attachments[0].Content.Type != "AdaptiveCard" ||
		len(card.Attachments[0].Content.Body) != 4 {
		t.Errorf("teams card: %v %s", err, teamsBox.Bodies()[0])
	}
	got := map[string]int{}
	for _, a := range am.Alerts(t) {
		got[a.Labels["key"]]++
		if a.Labels["alertname"] != "RestorewatchRegressionConfirmed" || a.Annotations["evidence"] == "" {
			t.Errorf("alertmanager alert: %+v", a)
		}
	}
	checkOnce(t, "alertmanager", got, now)

	// Nothing more until the digest; the digest is one message per channel.
	if st := pass(t, s); st.Sent != 0 || st.Messages != 0 {
		t.Fatalf("second pass sent %+v", st)
	}
	s.SetClock(func() time.Time { return time.Now().Add(25 * time.Hour) })
	st = pass(t, s)
	if st.Sent != 6 || st.Messages != 6 {
		t.Fatalf("digest pass: %+v, want the watch once on each of 6 channels", st)
	}
	if k := relay.Keys(); k[watch.Key] != 1 || relay.Messages() != 2 {
		t.Errorf("relay after the digest: %v in %d mails", k, relay.Messages())
	}
	if !strings.Contains(relay.Bodies()[1], "restorewatch digest: 1 series watched") {
		t.Errorf("digest mail:\n%s", relay.Bodies()[1])
	}
}

// TestAlertsRetryAndSecrets: a receiver that fails gets the batch again
// after the back-off; the error is on the alert, without the URL (a
// webhook's credential); a silence holds back what it matches.
func TestAlertsRetryAndSecrets(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	hook := alerttest.StartWebhook(t, "")
	hook.FailNext(1)
	secretURL := hook.URL + "?token=T0P-SECRET"
	cfg := alert.Config{Location: time.UTC, Backoff: time.Minute,
		Channels: []alert.ChannelConfig{{Name: "hook", Type: alert.TypeWebhook, URL: secretURL}}}
	a, b := event(store.AlertRTOBreach, store.SeverityCritical, 1), event(store.AlertRTOBreach, store.SeverityCritical, 2)
	if err := db.EnqueueAlerts(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddSilence(ctx, store.AlertSilence{Instance: b.Instance, By: "ana", Why: "patching",
		Until: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	s := newSender(t, db, cfg)
	if st := pass(t, s); st.Failed != 1 || st.Silenced != 1 {
		t.Fatalf("first pass: %+v", st)
	}
	as, err := db.Alerts(ctx, store.AlertFilter{State: store.DeliveryRetrying})
	if err != nil || len(as) != 1 {
		t.Fatalf("retrying: %v %v", as, err)
	}
	if e := as[0].Deliveries[0].LastError; !strings.Contains(e, "503") || strings.Contains(e, "T0P-SECRET") {
		t.Errorf("last error %q: want the status, never the URL", e)
	}
	if st := pass(t, s); st.Sent != 0 {
		t.Fatalf("sent before the back-off: %+v", st)
	}
	s.SetClock(func() time.Time { return time.Now().Add(2 * time.Minute) })
	if st := pass(t, s); st.Sent != 1 {
		t.Fatalf("after the back-off: %+v", st)
	}
	checkOnce(t, "webhook", hook.Keys(), []string{a.Key})
	sil, _ := db.Alerts(ctx, store.AlertFilter{State: store.DeliverySilenced})
	if len(sil) != 1 || !strings.Contains(sil[0].Deliveries[0].Note, "silenced by ana") {
		t.Errorf("silenced: %+v", sil)
	}
}

// TestAlertsGrouped: 2,000 confirmed regressions of one import are a
// handful of messages, each alert once.
func TestAlertsGrouped(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	hook := alerttest.StartWebhook(t, "k")
	var evs []store.AlertEvent
	var keys []string
	for i := range 2000 {
		e := event(store.AlertRegressionConfirmed, store.SeverityWarning, i)
		evs, keys = append(evs, e), append(keys, e.Key)
	}
	if err := db.EnqueueAlerts(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	s := newSender(t, db, alert.Config{Channels: []alert.ChannelConfig{{Name: "hook", Type: alert.TypeWebhook, URL: hook.URL, Secret: "k"}}})
	if st := pass(t, s); st.Sent != 2000 {
		t.Fatalf("pass: %+v", st)
	}
	checkOnce(t, "webhook", hook.Keys(), keys)
	if n := hook.Messages(); n > 4 {
		t.Errorf("%d messages for one import's 2,000 alerts, want at most 4", n)
	}
}

// TestRoutes: by kind, instance pattern, tag, severity and time of day.
func TestRoutes(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	if err := db.SetInstanceTags(ctx, "SQL-PROD-01", map[string]string{"env": "prod"}); err != nil {
		t.Fatal(err)
	}
	prodHook, devHook := alerttest.StartWebhook(t, ""), alerttest.StartWebhook(t, "")
	hour := (time.Now().UTC().Hour() + 12) % 24 // a window that is not now
	cfg := alert.Config{Location: time.UTC, Channels: []alert.ChannelConfig{
		{Name: "prod", Type: alert.TypeWebhook, URL: prodHook.URL}, {Name: "dev", Type: alert.TypeWebhook, URL: devHook.URL}},
		Routes: []alert.Route{
			{Channels: []string{"prod"}, Tags: map[string]string{"env": "prod"}, MinSeverity: store.SeverityWarning},
			{Channels: []string{"dev"}, Instances: []string{"SQL-DEV-*"}, Events: []string{store.AlertRTOBreach}},
			{Channels: []string{"dev"}, Instances: []string{"SQL-PROD-*"}, Hours: fmt.Sprintf("%02d:00-%02d:30", hour, hour)},
		}}
	mk := func(key, kind, sev, inst string) store.AlertEvent {
		return store.AlertEvent{Key: key, Kind: kind, Severity: sev, Instance: inst, Title: key, Since: time.Now()}
	}
	evs := []store.AlertEvent{
		mk("p1", store.AlertRegressionConfirmed, store.SeverityWarning, "sql-prod-01"),
		mk("p2", store.AlertRegressionConfirmed, store.SeverityInfo, "SQL-PROD-01"),
		mk("d1", store.AlertRTOBreach, store.SeverityWarning, "SQL-DEV-07"),
		mk("d2", store.AlertRegressionConfirmed, store.SeverityWarning, "SQL-DEV-07"),
	}
	if err := db.EnqueueAlerts(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	s := newSender(t, db, cfg)
	pass(t, s)
	checkOnce(t, "prod", prodHook.Keys(), []string{"p1"})
	checkOnce(t, "dev", devHook.Keys(), []string{"d1"})
}

// TestSendTest: `alerts test` reaches every channel; a channel that
// cannot be reached says why.
func TestSendTest(t *testing.T) {
	db := storetest.Open(t)
	hook := alerttest.StartWebhook(t, "s")
	relay := alerttest.StartSMTP(t, false, "", "")
	s := newSender(t, db, alert.Config{Channels: []alert.ChannelConfig{
		{Name: "hook", Type: alert.TypeWebhook, URL: hook.URL, Secret: "s"},
		{Name: "relay", Type: alert.TypeEmail, SMTPHost: relay.Host, SMTPPort: relay.Port, TLS: "none", From: "a@example.com", To: []string{"b@example.com"}},
		{Name: "down", Type: alert.TypeSlack, URL: "http://127.0.0.1:1/x"},
	}})
	res := s.Test(context.Background())
	if res["hook"] != nil || res["relay"] != nil || res["down"] == nil {
		t.Fatalf("test results: %v", res)
	}
	if hook.Messages() != 1 || relay.Messages() != 1 {
		t.Errorf("test messages: webhook %d, relay %d", hook.Messages(), relay.Messages())
	}
}

// TestSlackEscapes: a database named like a Slack mention pings no one.
func TestSlackEscapes(t *testing.T) {
	db := storetest.Open(t)
	box, u := alerttest.StartJSON(t)
	e := event(store.AlertRegressionConfirmed, store.SeverityWarning, 1)
	e.Title = "Full restores of <!channel> & co slowed"
	if err := db.EnqueueAlerts(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	pass(t, newSender(t, db, alert.Config{Channels: []alert.ChannelConfig{{Name: "s", Type: alert.TypeSlack, URL: u}}}))
	var sl struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(box.Bodies()[0]), &sl); err != nil || strings.Contains(sl.Text, "<!channel>") ||
		!strings.Contains(sl.Text, "&lt;!channel&gt; &amp; co") {
		t.Errorf("slack text: %q %v", sl.Text, err)
	}
}

// TestAlertmanagerWithoutBaseURL: without base_url the links are relative,
// which Alertmanager would refuse as generatorURL; the alerts still land.
func TestAlertmanagerWithoutBaseURL(t *testing.T) {
	db := storetest.Open(t)
	am := alerttest.StartAlertmanager(t)
	e := event(store.AlertRTOBreach, store.SeverityCritical, 3)
	if err := db.EnqueueAlerts(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	st := pass(t, newSender(t, db, alert.Config{Channels: []alert.ChannelConfig{{Name: "am", Type: alert.TypeAlertmanager, URL: am.URL}}}))
	if st.Sent != 1 {
		t.Fatalf("pass: %+v", st)
	}
	got := map[string]int{}
	for _, a := range am.Alerts(t) {
		got[a.Labels["key"]]++
	}
	checkOnce(t, "alertmanager", got, []string{e.Key})
}

// TestAlertsStreamGrouped: an analysis that queues regressions over
// minutes (one instance after another) is one message per group interval,
// the first after the group wait, each alert once.
func TestAlertsStreamGrouped(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	hook := alerttest.StartWebhook(t, "")
	s := newSender(t, db, alert.Config{GroupWait: 30 * time.Second, GroupInterval: 5 * time.Minute,
		Channels: []alert.ChannelConfig{{Name: "hook", Type: alert.TypeWebhook, URL: hook.URL}}})
	start := time.Now()
	var keys []string
	// Ten minutes of an analysis: 40 alerts queued, a sender pass every 30 s.
	for i := range 40 {
		e := event(store.AlertRegressionConfirmed, store.SeverityWarning, i)
		if err := db.EnqueueAlerts(ctx, e); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, e.Key)
		at := start.Add(time.Duration(i+1) * 15 * time.Second)
		if i%2 == 1 {
			s.SetClock(func() time.Time { return at })
			pass(t, s)
		}
	}
	s.SetClock(func() time.Time { return start.Add(20 * time.Minute) })
	pass(t, s)
	checkOnce(t, "webhook", hook.Keys(), keys)
	if n := hook.Messages(); n < 2 || n > 4 {
		t.Errorf("%d messages for 40 alerts queued over 10 minutes, want 2 to 4 (one per 5-minute group interval)", n)
	}
}

// TestSMTPNeverSendsThePasswordInClear: a channel set to STARTTLS with a
// login, pointed at a server that offers no STARTTLS, fails without
// logging in or sending; the password is not in the error.
func TestSMTPNeverSendsThePasswordInClear(t *testing.T) {
	db := storetest.Open(t)
	relay := alerttest.StartSMTP(t, false, "", "")
	s := newSender(t, db, alert.Config{Channels: []alert.ChannelConfig{{Name: "mail", Type: alert.TypeEmail, SMTPHost: relay.Host,
		SMTPPort: relay.Port, TLS: "starttls", User: "rw", Password: "pa55-word", From: "a@example.com", To: []string{"b@example.com"}}}})
	err := s.Test(context.Background())["mail"]
	if err == nil || strings.Contains(err.Error(), "pa55-word") {
		t.Fatalf("STARTTLS to a server without it: %v", err)
	}
	if relay.Messages() != 0 || relay.Auths() != 0 {
		t.Errorf("the server got %d mails, %d logins", relay.Messages(), relay.Auths())
	}
}

// TestAlertmanagerResolvesTheConfirmation: a regression confirmed then
// resolved by the analysis fires in a real Alertmanager, then ends there.
func TestAlertmanagerResolvesTheConfirmation(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	am := alerttest.StartAlertmanager(t)
	if err := db.SetInstanceTags(ctx, "SQL-PROD-01", nil); err != nil {
		t.Fatal(err)
	}
	ids, err := db.InstanceIDs(ctx)
	if err != nil || len(ids) != 1 {
		t.Fatalf("instance ids %v %v", ids, err)
	}
	reg := store.Regression{Database: "Sales", Kind: store.KindFull, Direction: "regression", ChangedAt: time.Now().Add(-48 * time.Hour),
		BaselineMiBps: 800, CurrentMiBps: 300, Ratio: 0.375, RatioLow: 0.33, RatioHigh: 0.41, BaselineN: 20, CurrentN: 4}
	s := newSender(t, db, alert.Config{Channels: []alert.ChannelConfig{{Name: "am", Type: alert.TypeAlertmanager, URL: am.URL}},
		Routes: []alert.Route{{Channels: []string{"am"}, Mode: store.ModeNow}}})
	if err := db.SaveFindings(ctx, ids[0], 0, nil, []store.Regression{reg}, nil); err != nil {
		t.Fatal(err)
	}
	if st := pass(t, s); st.Sent != 1 {
		t.Fatalf("confirmed: %+v", st)
	}
	if as := am.Alerts(t); len(as) != 1 || as[0].Labels["severity"] != store.SeverityCritical || as[0].Status.State != "active" {
		t.Fatalf("alertmanager after the confirmation: %+v", as)
	}
	if err := db.SaveFindings(ctx, ids[0], 0, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if st := pass(t, s); st.Sent != 1 {
		t.Fatalf("resolved: %+v", st)
	}
	time.Sleep(50 * time.Millisecond)
	if as := am.Alerts(t); len(as) != 0 {
		t.Errorf("alertmanager still lists the regression after it resolved: %+v", as)
	}
}
