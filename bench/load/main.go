// Command load is a small HTTP load generator for the dashboard benchmark
// (BENCHMARKS.md). It talks to loopback only: it refuses any other host, and
// its dialer refuses any address that is not a loopback address, so a typo
// in -base cannot turn it on someone else's server.
//
// Paths come from -urls, one per line, relative to -base; they are requested
// round-robin by -c clients for -d (or until -n requests have been sent).
// A line may start with a label and a space ("instance /instances/SQL01") to
// name its pattern; otherwise the pattern is the path with numeric segments
// written {id} and query values written "…". The report is a markdown table
// per pattern and overall: requests, errors (a non-2xx status or a transport
// error), latency p50/p95/p99/max (to the last byte of the body). The exit
// status is 1 when any request failed, 2 on a usage error.
//
//	go run ./bench/load -base http://127.0.0.1:8080 -urls urls.txt -c 8 -d 30s
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Bounds: the generator never runs longer, sends more or opens more
// connections than these, whatever the flags say.
const (
	maxDuration    = 10 * time.Minute
	maxRequests    = 5_000_000
	maxConcurrency = 256
	maxURLs        = 100_000
)

type target struct {
	pattern, path string
}

type result struct {
	latency time.Duration
	bytes   int64
	err     string // "" when the request succeeded
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "http://127.0.0.1:8080", "server root (loopback only)")
	conc := fs.Int("c", 8, "concurrent clients")
	dur := fs.Duration("d", 30*time.Second, "duration (ignored when -n is set)")
	total := fs.Int("n", 0, "total requests (0: run for -d)")
	urlsFile := fs.String("urls", "", "file of paths, one per line, optionally preceded by a label and a space")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	p95Target := fs.Duration("target", 0, "p95 target; when set, the table says which patterns meet it")
	title := fs.String("title", "", "heading printed above the table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "load: "+format+"\n", a...)
		return 2
	}
	switch {
	case *urlsFile == "":
		return usage("-urls is required")
	case *conc < 1 || *conc > maxConcurrency:
		return usage("-c must be between 1 and %d", maxConcurrency)
	case *total < 0 || *total > maxRequests:
		return usage("-n must be between 0 and %d", maxRequests)
	case *total == 0 && (*dur <= 0 || *dur > maxDuration):
		return usage("-d must be positive and at most %s", maxDuration)
	case *timeout <= 0 || *timeout > maxDuration:
		return usage("-timeout must be positive and at most %s", maxDuration)
	}
	root, err := loopbackBase(*base)
	if err != nil {
		return usage("%v", err)
	}
	targets, err := readTargets(*urlsFile)
	if err != nil {
		return usage("%v", err)
	}

	client := &http.Client{
		Transport: &http.Transport{
			DialContext:         loopbackDialer().DialContext,
			MaxIdleConns:        *conc,
			MaxIdleConnsPerHost: *conc,
			DisableCompression:  true,
			Proxy:               nil, // never a proxy: the server is on this machine
		},
		Timeout: *timeout,
		// A redirect is reported as what it is, never followed elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	// The whole run is bounded: -d (or maxDuration with -n) plus one request's timeout.
	limit := *dur
	if *total > 0 {
		limit = maxDuration
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit+*timeout)
	defer cancel()
	stopAt := time.Now().Add(limit)

	results := make([][]result, len(targets))
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make(map[int][]result)
			for {
				i := next.Add(1) - 1
				if (*total > 0 && i >= int64(*total)) || i >= maxRequests || !time.Now().Before(stopAt) {
					break
				}
				k := int(i % int64(len(targets)))
				local[k] = append(local[k], get(ctx, client, root+targets[k].path))
			}
			mu.Lock()
			for k, rs := range local {
				results[k] = append(results[k], rs...)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	failed := report(stdout, stderr, *title, targets, results, elapsed, *conc, *p95Target)
	if failed > 0 {
		fmt.Fprintf(stderr, "load: %d requests failed\n", failed)
		return 1
	}
	return 0
}

// get requests one URL and reads its body to the end.
func get(ctx context.Context, c *http.Client, u string) result {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return result{err: err.Error()}
	}
	resp, err := c.Do(req)
	if err != nil {
		return result{latency: time.Since(start), err: err.Error()}
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := result{latency: time.Since(start), bytes: n}
	switch {
	case err != nil:
		r.err = "reading body: " + err.Error()
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		r.err = resp.Status
	}
	return r
}

// loopbackBase checks that base is an http URL on a loopback host and
// returns it without a trailing slash.
func loopbackBase(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("-base %q: %v", base, err)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("-base %q: only http:// on loopback is supported", base)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("-base %q: refusing a non-loopback host (use 127.0.0.1, ::1 or localhost)", base)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("-base %q: no query or fragment, please", base)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// loopbackDialer refuses to connect anywhere but a loopback address, whatever
// a name resolved to.
func loopbackDialer() *net.Dialer {
	return &net.Dialer{
		Timeout: 5 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("refusing to connect to non-loopback address %s", address)
			}
			return nil
		},
	}
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// readTargets reads the URL file.
func readTargets(path string) ([]target, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ts []target
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t := target{path: line}
		if label, p, ok := strings.Cut(line, " "); ok {
			t.pattern, t.path = label, strings.TrimSpace(p)
		}
		if !strings.HasPrefix(t.path, "/") {
			return nil, fmt.Errorf("%s:%d: %q is not a path starting with /", path, n, t.path)
		}
		if t.pattern == "" {
			t.pattern = patternOf(t.path)
		}
		if len(ts) == maxURLs {
			return nil, fmt.Errorf("%s: more than %d paths", path, maxURLs)
		}
		ts = append(ts, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, errors.New(path + ": no paths")
	}
	return ts, nil
}

// patternOf names a path's pattern: /restores/123?sort=longest → /restores/{id}?sort=….
func patternOf(p string) string {
	path, query, _ := strings.Cut(p, "?")
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if digits.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	out := strings.Join(segs, "/")
	if query != "" {
		var keys []string
		for _, kv := range strings.Split(query, "&") {
			k, _, _ := strings.Cut(kv, "=")
			keys = append(keys, k+"=…")
		}
		out += "?" + strings.Join(keys, "&")
	}
	return out
}

type row struct {
	pattern             string
	n, errs             int
	bytes               int64
	p50, p95, p99, maxL time.Duration
	firstErr            string
}

func summarize(pattern string, rs []result) row {
	r := row{pattern: pattern, n: len(rs)}
	lat := make([]time.Duration, 0, len(rs))
	for _, x := range rs {
		lat = append(lat, x.latency)
		r.bytes += x.bytes
		if x.err != "" {
			r.errs++
			if r.firstErr == "" {
				r.firstErr = x.err
			}
		}
	}
	slices.Sort(lat)
	r.p50, r.p95, r.p99 = quantile(lat, 0.50), quantile(lat, 0.95), quantile(lat, 0.99)
	if len(lat) > 0 {
		r.maxL = lat[len(lat)-1]
	}
	return r
}

// quantile is the nearest-rank quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// report prints the table and returns the number of failed requests.
func report(w, stderr io.Writer, title string, targets []target, results [][]result, elapsed time.Duration, conc int, p95Target time.Duration) int {
	var order []string
	by := map[string][]result{}
	var all []result
	for k, t := range targets {
		if _, ok := by[t.pattern]; !ok {
			order = append(order, t.pattern)
		}
		by[t.pattern] = append(by[t.pattern], results[k]...)
		all = append(all, results[k]...)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	if title != "" {
		fmt.Fprintf(w, "%s\n\n", title)
	}
	head := "| pattern | requests | errors | p50 ms | p95 ms | p99 ms | max ms | KiB/resp |"
	sep := "|---|---:|---:|---:|---:|---:|---:|---:|"
	if p95Target > 0 {
		head += fmt.Sprintf(" p95 < %s |", p95Target)
		sep += "---|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	failed := 0
	line := func(r row, bold bool) {
		name := "`" + r.pattern + "`"
		if bold {
			name = "**" + r.pattern + "**"
		}
		kib := 0.0
		if r.n > 0 {
			kib = float64(r.bytes) / float64(r.n) / 1024
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %.1f |", name, r.n, r.errs, ms(r.p50), ms(r.p95), ms(r.p99), ms(r.maxL), kib)
		if p95Target > 0 {
			verdict := "yes"
			if r.p95 >= p95Target {
				verdict = "**no**"
			}
			fmt.Fprintf(w, " %s |", verdict)
		}
		fmt.Fprintln(w)
	}
	for _, p := range order {
		r := summarize(p, by[p])
		line(r, false)
		if r.errs > 0 {
			failed += r.errs
			fmt.Fprintf(stderr, "load: %s: %d of %d failed, first: %s\n", p, r.errs, r.n, r.firstErr)
		}
	}
	overall := summarize("overall", all)
	line(overall, true)
	fmt.Fprintf(w, "\n%d requests in %.1f s from %d clients: %.1f requests/s, %d failed.\n",
		overall.n, elapsed.Seconds(), conc, float64(overall.n)/elapsed.Seconds(), overall.errs)
	return failed
}
