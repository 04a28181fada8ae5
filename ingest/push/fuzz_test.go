package push_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
)

// FuzzDecode feeds Decode arbitrary batch text (compressed here, so the
// fuzzer works on the JSON lines): it must not panic, and a batch it accepts
// must hold exactly the records its header counts.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"restorewatch_push":1,"batch":"0123456789abcdef0123456789abcdef","source":"live","name":"SQL01","records":1}` + "\n" +
		`{"log":{"Instance":"SQL01","Database":"Sales","Kind":"full","CompletedAt":"2024-03-02T06:10:00Z","Pages":10,"Seconds":1.5}}` + "\n"))
	f.Add([]byte(`{"restorewatch_push":1,"batch":"0123456789abcdef0123456789abcdef","source":"live","name":"SQL01","records":0}`))
	f.Add([]byte(`{"restorewatch_push":2}`))
	// Issue 40's fields: a backup set's AG claims, a host's map of facts.
	f.Add([]byte(`{"restorewatch_push":1,"batch":"0123456789abcdef0123456789abcdef","source":"live","name":"SQL01","records":2}` + "\n" +
		`{"backup":{"instance":"SQL01","database":"Sales","backup_set_uuid":"5B0C1E1A-0000-4000-8000-000000000001","type":"D","first_lsn":"1000","last_lsn":"2000",` +
		`"backup_start":"2026-03-01T01:00:00Z","backup_finish":"2026-03-01T01:10:00Z","family_guid":"7D1E2F30-4A5B-4C6D-8E9F-0A1B2C3D4E5F",` +
		`"availability_group":"dwh-sql02","ag_listener":"DWH-SQL02","group_database_id":"x","media":[],"files":[]}}` + "\n" +
		`{"host":{"Instance":"SQL01","ObservedAt":"2026-03-02T06:00:00Z","Extra":{"a":"1","b":{"c":[1,{"d":2}]}}}}` + "\n"))
	f.Add([]byte("{\"history\":null}\n\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		gz.Write(text)
		gz.Close()
		b, err := push.Decode(&buf)
		if err != nil {
			if store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("a bad batch is %v, want invalid", err)
			}
			return
		}
		var c store.Collect
		if err := b.Feed(&c); err != nil {
			t.Fatal(err)
		}
		if n := len(c.Histories) + len(c.LogRestores) + len(c.Hosts) + len(c.Rejects); n != b.Records {
			t.Fatalf("fed %d records, header says %d", n, b.Records)
		}
	})
}
