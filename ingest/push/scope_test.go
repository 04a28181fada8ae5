package push_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/push"
)

// taggedBatch is rawBatch whose header also carries tags.
func taggedBatch(t testing.TB, instance string, tags map[string]string, lines ...string) []byte {
	t.Helper()
	h, _ := json.Marshal(map[string]any{"restorewatch_push": 1, "batch": fmt.Sprintf("%032x", time.Now().UnixNano()),
		"source": "live", "name": instance, "records": len(lines), "tags": tags})
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.Write(append(h, '\n'))
	for _, l := range lines {
		io.WriteString(gz, l+"\n")
	}
	gz.Close()
	return buf.Bytes()
}

func logLine(instance string) string {
	return fmt.Sprintf(`{"log":{"Instance":%q,"Database":"Sales","Kind":"full","CompletedAt":"2026-03-02T06:10:00Z","Pages":10,"Seconds":1.5,"Origin":{"Source":"errorlog","File":"ERRORLOG","Line":7}}}`, instance)
}

func runLine(instance string) string {
	return fmt.Sprintf(`{"run":{"instance":%q,"started":"2026-03-02T06:00:00Z","finished":"2026-03-02T06:01:00Z","status":"failed","errors":{"history":"login failed"}}}`, instance)
}

// pushed sends body with tok and returns the status and the error message.
func pushed(t *testing.T, ts interface{ Client() *http.Client }, url, tok string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+push.Path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg struct {
		Error string `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&msg)
	return resp.StatusCode, msg.Error
}

// A collector token writes only its zone's instances (issue 28 item 3):
// never an instance this server imported itself, never another zone's
// (restores, tags or run records), never one its patterns do not match;
// 403 says why, and nothing of a refused batch is stored. token list's
// data shows each token's patterns and instances.
func TestTokenWritesOnlyItsInstances(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	tokA, err := db.CreateCollectorToken(ctx, "zone-a", "SQLA*")
	if err != nil {
		t.Fatal(err)
	}
	tokB, _ := db.CreateCollectorToken(ctx, "zone-b")
	// An instance imported on this server (the fixture's error log).
	if _, err := ingest.NewLoader(db, ingest.LoaderOptions{}).Records(ctx, "errorlog", "ERRORLOG", feed(records(t))); err != nil {
		t.Fatal(err)
	}
	local := records(t).LogRestores[0].Instance
	ts, _ := central(t, db)

	if code, msg := pushed(t, ts, ts.URL, tokA, rawBatch(t, "SQLA01", logLine("SQLA01"))); code != http.StatusOK {
		t.Fatalf("zone-a writing its own SQLA01: %d %s", code, msg)
	}
	if code, msg := pushed(t, ts, ts.URL, tokB, rawBatch(t, "SQLB01", logLine("SQLB01"))); code != http.StatusOK {
		t.Fatalf("zone-b writing a new SQLB01: %d %s", code, msg)
	}
	before := count(t, path, `SELECT COUNT(*) FROM log_restore`) + count(t, path, `SELECT COUNT(*) FROM collector_run`)
	for _, tc := range []struct {
		name, tok string
		body      []byte
		want      string
	}{
		{"zone-b adds a restore to a local instance", tokB, rawBatch(t, local, logLine(local)), "not in this collector's zone"},
		{"zone-b hides its write in another pass's batch", tokB, rawBatch(t, "SQLB01", logLine("SQLB01"), logLine(local)), "not in this collector's zone"},
		{"zone-b sets tags on zone-a's instance", tokB, taggedBatch(t, "SQLA01", map[string]string{"rto": "1s"}), "not in this collector's zone"},
		{"zone-b forges a failed run of zone-a's instance", tokB, rawBatch(t, "SQLA01", runLine("SQLA01")), "not in this collector's zone"},
		{"zone-a writes beyond its patterns", tokA, rawBatch(t, "SQLC01", logLine("SQLC01")), "names only SQLA*"},
		{"zone-a writes zone-b's instance", tokA, rawBatch(t, "SQLB01", logLine("SQLB01")), "may not write instance SQLB01"},
	} {
		code, msg := pushed(t, ts, ts.URL, tc.tok, tc.body)
		if code != http.StatusForbidden || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %q, want 403 saying %q", tc.name, code, msg, tc.want)
		}
	}
	if after := count(t, path, `SELECT COUNT(*) FROM log_restore`) + count(t, path, `SELECT COUNT(*) FROM collector_run`); after != before {
		t.Errorf("refused batches stored %d records or runs", after-before)
	}
	if tags, _ := db.InstanceTags(ctx, "SQLA01"); tags["rto"] != "" {
		t.Errorf("zone-b's tags were set on SQLA01: %v", tags)
	}
	toks, err := db.CollectorTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tk := range toks {
		got[tk.Name] = strings.Join(tk.Instances, ",") + " | " + strings.Join(tk.Claimed, ",")
	}
	if got["zone-a"] != "SQLA* | SQLA01" || got["zone-b"] != " | SQLB01" {
		t.Errorf("tokens' scopes: %q", got)
	}
}
