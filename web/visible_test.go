package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// A right-to-left override in a database name or a host value, and a NUL
// in a pushed origin file (issue 28 item 6), show as their code points on
// every page, never raw (escaped HTML would still render them).
func TestInvisibleCharactersShowAsCodePoints(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 6, 10, 0, 0, time.UTC)
	off := 0
	_, err := ingest.NewLoader(db, ingest.LoaderOptions{}).Records(ctx, "live", "zone-b/SQLBIDI", func(s store.Sink) error {
		if err := s.Host(store.HostSnapshot{Instance: "SQLBIDI", ObservedAt: at.Add(-time.Hour), UTCOffset: &off, Version: "16.0.4115.5",
			OS: "Windows Server\u202e2202", Extra: map[string]string{"service account": "NT SERVICE\\MSSQL\u202egpj.exe"},
			Origin: store.Origin{Source: store.SourceLive, File: "ERR\x00LOG", Line: 1}}); err != nil {
			return err
		}
		return s.LogRestore(store.LogRestore{Instance: "SQLBIDI", Database: "Sales\u202egpj.exe", Kind: store.KindFull, MessageID: 18267,
			CompletedAt: at, UTCOffset: &off, Has3014: true, Pages: 100, Seconds: 2, Statement: "RESTORE DATABASE",
			Origin: store.Origin{Source: store.SourceErrorLog, File: "ERR\x00LOG", Line: 7}})
	})
	if err != nil {
		t.Fatal(err)
	}
	l := ingest.NewLoader(db, ingest.LoaderOptions{})
	if _, err := l.Derive(ctx); err != nil {
		t.Fatal(err)
	}
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	_, list, _ := get(t, c, ts.URL+"/restores")
	id := regexp.MustCompile(`href="(/restores/\d+)"`).FindStringSubmatch(list)
	if id == nil {
		t.Fatal("no restore listed")
	}
	for _, p := range []string{"/restores", id[1], "/instances/SQLBIDI"} {
		_, body, _ := get(t, c, ts.URL+p)
		if strings.ContainsAny(body, "\u202e\x00") {
			t.Errorf("%s shows a raw U+202E or NUL", p)
		}
		if !strings.Contains(body, "⟨U+202E⟩") {
			t.Errorf("%s does not show ⟨U+202E⟩", p)
		}
	}
	_, body, _ := get(t, c, ts.URL+id[1])
	if !strings.Contains(body, "ERR⟨U+0000⟩LOG") {
		t.Errorf("the restore page does not show the origin's NUL as ⟨U+0000⟩")
	}
	if got := view.Visible("a\u200cb\u200dc — é"); got != "a\u200cb\u200dc — é" {
		t.Errorf("joiners and ordinary text changed: %q", got)
	}
}
