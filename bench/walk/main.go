// Command walk runs the consistency walker (web/walk, issue 38) against a
// running dashboard and, given the warehouse and the command, the CLI on
// the same warehouse: every surface must state each regression's, RTO's,
// watch's and knee's figures as the API does.
//
//	go run ./bench/walk -url http://127.0.0.1:8080 -db restorewatch.db -rw ./restorewatch
//
// It prints what it compared and every disagreement, and exits 1 when there
// is one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/restorewatch/restorewatch/web/walk"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "the dashboard's address")
	db := flag.String("db", "", "the warehouse the dashboard serves (for the CLI's surfaces; empty: the CLI is left out)")
	rw := flag.String("rw", "restorewatch", "the restorewatch command (with -db)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c := &http.Client{Timeout: 2 * time.Minute}
	src := walk.Source{Get: func(ctx context.Context, path string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, *base+path, nil)
		if err != nil {
			return "", err
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = errors.New(resp.Status)
		}
		return string(b), err
	}}
	if *db != "" {
		src.CLI = func(ctx context.Context, args ...string) (string, error) {
			out, err := exec.CommandContext(ctx, *rw, append(args, "--db", *db)...).Output()
			return string(out), err
		}
	}
	start := time.Now()
	res, err := walk.Walk(ctx, src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "walk:", err)
		os.Exit(2)
	}
	fmt.Printf("walked %d entities (%d watches), compared %d figures on %v in %.1f s\n",
		res.Entities, res.Watches, res.Checks, res.Surfaces, time.Since(start).Seconds())
	for _, d := range res.Sorted() {
		fmt.Println(d)
	}
	if len(res.Disagreements) > 0 {
		fmt.Printf("%d disagreements\n", len(res.Disagreements))
		os.Exit(1)
	}
}
