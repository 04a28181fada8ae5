package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// pushBomb is the decoded-size amplification of issue 28: n concurrent
// pushes with a valid collector token, each a batch of lines backup-set
// lines whose files array holds as many empty objects as fit in a line
// under the server's 1 MiB line limit (349,000: 3 bytes of JSON each, a
// 72-byte struct decoded), or files of them (32,000: within SQL Server's
// limit, so only the batch's decode budget stops them). The batch is ~1 MiB a line decompressed, a few
// KiB compressed. The server's peak RSS, its answers and their times are
// reported.
func pushBomb(s *server, bin string, n, lines, files int, rssCap int64) error {
	out, err := exec.Command(bin, "token", "create", "--db", filepath.Join(s.dir, "rw.db"), "zone-b").Output()
	if err != nil {
		return fmt.Errorf("token create: %v", err)
	}
	tok := strings.TrimSpace(string(out))
	body := bombBatch(lines, files)
	fmt.Printf("push: %d pushes of %d lines, %d KiB compressed, %d MiB decompressed each\n", n, lines, len(body)>>10, lines*(files*3)>>20)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	peak, capped := s.watchRSS(ctx, cancel, rssCap)
	began := time.Now()
	answers := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.addr+"/api/push", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			t0 := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers[i] = "error: " + err.Error()
				return
			}
			resp.Body.Close()
			answers[i] = fmt.Sprintf("%s after %.2f s", resp.Status, time.Since(t0).Seconds())
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	time.Sleep(time.Second) // what the server still holds once it answered
	cancel()
	for i, a := range answers {
		fmt.Printf("push %d: %s\n", i+1, a)
	}
	note := ""
	if capped.Load() {
		note = fmt.Sprintf(" (stopped at the %d MiB cap)", rssCap>>20)
	}
	fmt.Printf("push: %d pushes in %.1f s; server peak RSS %d MiB%s; RSS a second later %d MiB\n",
		n, elapsed.Seconds(), max(s.status("VmHWM"), peak.Load())>>20, note, s.rss()>>20)
	return nil
}

// bombBatch is a gzipped batch of lines backup sets, each with n empty
// files.
func bombBatch(lines, n int) []byte {
	files := "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]"
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	fmt.Fprintf(gz, `{"restorewatch_push":1,"batch":"%032x","source":"live","name":"SQLB01","records":%d}`+"\n", time.Now().UnixNano(), lines)
	for i := range lines {
		fmt.Fprintf(gz, `{"backup":{"instance":"SQLB01","database":"Sales","backup_set_uuid":"5B0C1E1A-0000-4000-8000-%012d","type":"D",`+
			`"first_lsn":"1000","last_lsn":"2000","backup_start":"2026-03-01T01:00:00Z","backup_finish":"2026-03-01T01:10:00Z","files":%s}}`+"\n", i, files)
	}
	gz.Close()
	return buf.Bytes()
}
