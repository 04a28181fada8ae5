package csv_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
)

// discard is a Sink that keeps nothing, so the benchmark measures the parser.
type discard struct{}

func (discard) History(store.HistoryRow) error    { return nil }
func (discard) LogRestore(store.LogRestore) error { return nil }
func (discard) Host(store.HostSnapshot) error     { return nil }
func (discard) BackupSet(store.BackupSet) error   { return nil }
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

// filler streams n copies of one byte without holding them, so a 200 MB
// line costs the test nothing but the parser's own memory.
type filler struct {
	b byte
	n int64
}

func (f *filler) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	for i := range p {
		p[i] = f.b
	}
	f.n -= int64(len(p))
	return len(p), nil
}

const hugeLine = 200 << 20

// hugeInput is a small export with one line of n filler bytes (quoted, so
// the line is one unterminated field, when quote is set) after its first
// row, and good rows after it.
func hugeInput(fill byte, n int64, quote bool) io.Reader {
	head := "instance,restore_date,destination_database_name\nS1,2024-01-02 03:04:05,before\n"
	if quote {
		head += `"`
	}
	tail := "\nS1,2024-01-02 03:04:06,after1\nS1,2024-01-02 03:04:07,after2\n"
	return io.MultiReader(strings.NewReader(head), &filler{b: fill, n: n}, strings.NewReader(tail))
}

// peakHeap samples the live heap while f runs and returns its maximum in
// MiB (a sample every 2 ms: a peak shorter than that can be missed, which
// only ever flatters the figure).
func peakHeap(f func()) float64 {
	runtime.GC()
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return float64(peak) / (1 << 20)
}

// BenchmarkHugeLine parses a 200 MB single-line record and a 200 MB run of
// NUL bytes streamed from an io.Reader, and reports the peak live heap
// (peak-MiB) and the bytes allocated per parse (B/op): issue 12's inputs
// that once took 1–4 GB.
func BenchmarkHugeLine(b *testing.B) {
	for _, tc := range []struct {
		name  string
		fill  byte
		quote bool
	}{
		{"single-line", 'x', false},
		{"quoted-line", 'x', true},
		{"nul-filled", 0, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(hugeLine)
			b.ReportAllocs()
			var peak float64
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					_, err := csv.Parse(context.Background(), hugeInput(tc.fill, hugeLine, tc.quote), csv.Options{File: "huge.csv"}, discard{})
					if err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(peak, "peak-MiB")
		})
	}
}
