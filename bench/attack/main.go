// Command attack measures how `restorewatch serve` stands the attacks of
// issues 12 and 28, on loopback only, bounded in count and time, and stops
// by itself:
//
//   - fields: 5 unauthenticated uploads stream many small form fields
//     (4,000 bytes each, each with its own name) before any file; the
//     server's peak RSS and its answers are reported.
//   - slow: 500 POSTs (to a regression's status form by default) send their
//     headers and then one byte every 5 s; meanwhile /healthz is probed once
//     a second, and the requests the server still holds after 60 s are
//     counted.
//   - push: concurrent pushes with a valid collector token (made with
//     `token create`), each a batch of backup sets whose files arrays hold
//     349,000 empty objects a line (issue 28's decoded-size
//     amplification); the server's peak RSS and its answers are reported.
//
// It starts the given binary itself, with RW_TOKEN set and its descriptor
// limit set by `ulimit -n`, on a free 127.0.0.1 port and a fresh warehouse,
// and kills it at the end:
//
//	go build -o /tmp/rw ./cmd/restorewatch
//	go run ./bench/attack -bin /tmp/rw -attack fields
//	go run ./bench/attack -bin /tmp/rw -attack slow -nofile 1024 [-slow 500] [-path /import]
//	go run ./bench/attack -bin /tmp/rw -attack push [-pushes 2] [-lines 64] [-files 349000]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	bin := flag.String("bin", "", "the restorewatch binary to attack (required)")
	attack := flag.String("attack", "fields", "fields | slow | push")
	nofile := flag.Int("nofile", 1024, "the server's descriptor limit (ulimit -n)")
	uploads := flag.Int("uploads", 5, "fields: concurrent uploads")
	perUpload := flag.Int64("mib", 400, "fields: MiB of fields each upload sends at most")
	rssCap := flag.Int64("rss-cap", 2048, "fields: stop when the server's RSS passes this many MiB (protects the machine)")
	slow := flag.Int("slow", 500, "slow: stalled uploads")
	hold := flag.Duration("hold", 60*time.Second, "slow: how long to keep the uploads stalled")
	path := flag.String("path", "/regressions/1/status", "slow: where the bodies go (/import is multipart, anything else a urlencoded form)")
	length := flag.Int("length", 1000000, "slow: the Content-Length the requests announce")
	method := flag.String("method", "POST", "slow: the requests' method (a GET with a body is read after the page is made)")
	pushes := flag.Int("pushes", 2, "push: concurrent pushes")
	lines := flag.Int("lines", 64, "push: backup-set lines per batch")
	files := flag.Int("files", 349_000, "push: empty objects in each line's files array (349,000 fill the 1 MiB line limit)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "attack: -bin is required")
		os.Exit(2)
	}
	srv, err := start(*bin, *nofile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "attack:", err)
		os.Exit(1)
	}
	defer srv.stop()
	switch *attack {
	case "fields":
		err = fields(srv, *uploads, *perUpload<<20, *rssCap<<20)
	case "slow":
		err = slowBodies(srv, *slow, *hold, *method, *path, *length)
	case "push":
		err = pushBomb(srv, *bin, *pushes, *lines, *files, *rssCap<<20)
	default:
		err = fmt.Errorf("unknown attack %q", *attack)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "attack:", err)
		srv.stop()
		os.Exit(1)
	}
}

type server struct {
	cmd  *exec.Cmd
	addr string
	dir  string
	log  *os.File
}

// start runs `bin serve` on a free loopback port and waits for /healthz.
func start(bin string, nofile int) (*server, error) {
	dir, err := os.MkdirTemp("", "rw-attack-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sh", "-c", `ulimit -n "$1" && exec "$2" serve --db "$3" --addr "$4"`, "sh",
		strconv.Itoa(nofile), bin, filepath.Join(dir, "rw.db"), addr)
	cmd.Env = append(os.Environ(), "RW_TOKEN=attack-bench-token")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, addr: addr, dir: dir, log: logf}
	c := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := c.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Printf("server pid %d on %s, ulimit -n %d, RSS at rest %d MiB\n", cmd.Process.Pid, addr, nofile, s.rss()>>20)
				return s, nil
			}
		}
	}
	s.stop()
	return nil, errors.New("the server did not answer /healthz within 60 s")
}

func (s *server) stop() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	s.log.Close()
	os.RemoveAll(s.dir)
}

// status reads a field of /proc/PID/status in bytes (VmRSS, VmHWM).
func (s *server) status(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (s *server) rss() int64 { return s.status("VmRSS") }

// watchRSS samples the server's RSS until ctx ends, keeping its peak, and
// cancels (setting capped) once it passes rssCap, to protect the machine.
func (s *server) watchRSS(ctx context.Context, cancel context.CancelFunc, rssCap int64) (peak *atomic.Int64, capped *atomic.Bool) {
	peak, capped = new(atomic.Int64), new(atomic.Bool)
	go func() {
		for ctx.Err() == nil {
			r := s.rss()
			peak.Store(max(peak.Load(), r))
			if r > rssCap {
				capped.Store(true)
				cancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return peak, capped
}

func (s *server) fds() int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid))
	return len(ents)
}

// fields streams uploads of ever more fields until each has sent max bytes,
// the server stops reading, or the server's RSS passes rssCap.
func fields(s *server, n int, max, rssCap int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	peak, capped := s.watchRSS(ctx, cancel, rssCap)
	began := time.Now()
	type result struct {
		sent   int64
		status string
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr, pw := io.Pipe()
			mw := multipart.NewWriter(pw)
			var sent atomic.Int64
			go func() {
				value := strings.Repeat("v", 4000)
				for f := 0; sent.Load() < max && ctx.Err() == nil; f++ {
					if err := mw.WriteField(fmt.Sprintf("u%df%d", i, f), value); err != nil {
						return
					}
					sent.Add(4000)
				}
				mw.Close()
				pw.Close()
			}()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.addr+"/import", pr)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			resp, err := http.DefaultClient.Do(req)
			pr.CloseWithError(errors.New("done"))
			st := ""
			if err != nil {
				st = "error: " + err.Error()
			} else {
				st = resp.Status
				resp.Body.Close()
			}
			results[i] = result{sent.Load(), st}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	cancel()
	for i, r := range results {
		fmt.Printf("upload %d: sent %d MiB of fields, answer %s\n", i+1, r.sent>>20, r.status)
	}
	hwm := max64(s.status("VmHWM"), peak.Load())
	note := ""
	if capped.Load() {
		note = fmt.Sprintf(" (stopped at the %d MiB cap: the server would have gone on growing)", rssCap>>20)
	}
	fmt.Printf("fields: %d uploads in %.1f s; server peak RSS %d MiB%s; RSS now %d MiB\n", n, elapsed.Seconds(), hwm>>20, note, s.rss()>>20)
	return nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// slowBodies holds n uploads that trickle a byte every 5 s, probes
// /healthz once a second meanwhile, and counts what the server still holds.
func slowBodies(s *server, n int, hold time.Duration, method, path string, length int) error {
	head := method + " " + path + " HTTP/1.1\r\nHost: " + s.addr + "\r\nContent-Length: " + strconv.Itoa(length) + "\r\n"
	if path == "/import" {
		head += "Content-Type: multipart/form-data; boundary=b\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
	} else {
		head += "Content-Type: application/x-www-form-urlencoded\r\n\r\nstatus=acknowledged&note="
	}
	var mu sync.Mutex
	var conns []net.Conn
	dialErrs := 0
	for range n {
		conn, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			dialErrs++
			continue
		}
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, head)
		conns = append(conns, conn)
	}
	// closed[i] is set when the server closed (or answered) upload i.
	closed := make([]atomic.Bool, len(conns))
	for i, conn := range conns {
		go func() {
			br := bufio.NewReader(conn)
			conn.SetReadDeadline(time.Now().Add(hold + 30*time.Second))
			br.ReadByte() // a response or EOF: the server let go
			closed[i].Store(true)
		}()
	}
	stopTrickle := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopTrickle:
				return
			case <-t.C:
				mu.Lock()
				for i, conn := range conns {
					if !closed[i].Load() {
						conn.SetWriteDeadline(time.Now().Add(time.Second))
						conn.Write([]byte("x"))
					}
				}
				mu.Unlock()
			}
		}
	}()
	fmt.Printf("slow: %d bodies to %s %s stalled (%d could not connect), server holds %d descriptors\n", len(conns), method, path, dialErrs, s.fds())
	// Each probe on a new connection, as a load balancer's health check.
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ok, failed := 0, 0
	var firstFail string
	maxFDs := 0
	began := time.Now()
	for time.Since(began) < hold {
		t0 := time.Now()
		resp, err := probe.Get("http://" + s.addr + "/healthz")
		if err == nil && resp.StatusCode == http.StatusOK {
			ok++
		} else {
			failed++
			if os.Getenv("ATTACK_DEBUG") != "" {
				fmt.Printf("probe at %.1f s failed: %v (server holds %d descriptors)\n", time.Since(began).Seconds(), err, s.fds())
			}
			if firstFail == "" {
				if err != nil {
					firstFail = err.Error()
				} else {
					firstFail = resp.Status
				}
			}
		}
		if err == nil {
			resp.Body.Close()
		}
		maxFDs = max(maxFDs, s.fds())
		time.Sleep(time.Second - time.Since(t0))
	}
	close(stopTrickle)
	held := 0
	for i := range closed {
		if !closed[i].Load() {
			held++
		}
	}
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	fmt.Printf("slow: /healthz answered %d of %d probes in %s (first failure: %q); uploads still held after %s: %d of %d; server descriptors peaked at %d\n",
		ok, ok+failed, hold, firstFail, hold, held, len(conns), maxFDs)
	if b, err := os.ReadFile(s.log.Name()); err == nil && strings.Contains(string(b), "too many open files") {
		fmt.Println("slow: the server logged \"too many open files\"")
	}
	return nil
}
