package csv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
)

// discard is a Sink that keeps nothing, so the benchmark measures the parser.
type discard struct{}

func (discard) History(store.HistoryRow) error    { return nil }
func (discard) LogRestore(store.LogRestore) error { return nil }
func (discard) Host(store.HostSnapshot) error     { return nil }
func (discard) Reject(store.Reject)               {}

// genCSV renders n rows the way sqlcmd -s"," -W saves the export query.
func genCSV(n int) string {
	var b strings.Builder
	b.WriteString(strings.Join(csv.Columns(), ",") + "\r\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"SQL%02d\PROD",%d,2024-03-%02d 09:30:05.123,"Billing_%d","CORP\svc_restore",D,0,1,NULL,2,`+
			`6F9619FF-8B86-D011-B42D-00C04FC964FF,1B6C3F2A-0D4E-4C4B-9D7E-2F1A8B3C4D5E,"SRC01\PROD","SRC01","Billing",D,`+
			`2024-03-17 01:00:00.000,2024-03-17 01:20:41.537,39000000115200001,39000000117600001,10737418240,2147483648,`+
			`13,0,4474,0,1,NULL,2,2,"\\nas01\sql\Billing_1.bak|\\nas01\sql\Billing_2.bak"`+"\r\n",
			i%50, i+1, i%28+1, i%300)
	}
	return b.String()
}

// BenchmarkParse parses a 100k-row export into a discarding sink and reports
// rows/s (SPEC's floor is 100k rows/s).
func BenchmarkParse(b *testing.B) {
	const rows = 100_000
	data := genCSV(rows)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := csv.Parse(context.Background(), strings.NewReader(data), csv.Options{File: "bench.csv"}, discard{})
		if err != nil || st.Rows != rows {
			b.Fatalf("rows = %d, err = %v", st.Rows, err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
