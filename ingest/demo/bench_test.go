package demo_test

import (
	"os"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
)

// BenchmarkGenerate measures writing the default fleet and a 100,000-restore
// fleet of 200 instances (the dashboard benchmark's million restores over
// 2,000 instances is the same work ten times over: generation streams).
//
//	go test -run '^$' -bench Generate -benchtime 1x ./ingest/demo/
func BenchmarkGenerate(b *testing.B) {
	for _, size := range []struct {
		name                string
		instances, restores int
	}{{"default", 0, 0}, {"100k-200", 200, 100_000}} {
		b.Run(size.name, func(b *testing.B) {
			dir := b.TempDir()
			var f demo.Fleet
			var took time.Duration
			for b.Loop() {
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				var err error
				f, err = demo.Generate(demo.Config{Instances: size.instances, Restores: size.restores, Seed: 1, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
			}
			b.SetBytes(f.Bytes)
			b.ReportMetric(float64(f.Restores), "restores")
			b.ReportMetric(float64(len(f.Files)), "files")
			b.ReportMetric(float64(f.Restores)*float64(b.N)/took.Seconds(), "restores/s")
		})
	}
}
