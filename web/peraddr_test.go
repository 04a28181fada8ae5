package web_test

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web"
)

// One address holding many slow connections (issue 28 item 4) takes only
// its share of the cap; its extra connections get the reserved slots,
// which close within seconds, so health checks, even from the same
// address (a monitor on the same host), keep being answered.
func TestOneAddressCannotStarveTheHealthCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 200 connections through their timeouts (about 3 s): the full suite runs it")
	}
	s, addr := started(t, web.Config{DB: demoDB(t), MaxConns: 64, MaxConnsPerAddr: 16, ReadHeaderTimeout: time.Hour, ReadTimeout: time.Hour})
	var held []net.Conn
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break // refused at once beyond the reserve: what the client wanted is done
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\n")) // headers never finished
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	if n := s.OpenConns(); n > 16 {
		t.Errorf("one address holds %d connections, its share is 16", n)
	}
	time.Sleep(3 * time.Second) // the reserved slots the slow connections took have ended
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ok := 0
	for range 16 {
		resp, err := hc.Get("http://" + addr + "/healthz")
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				ok++
			}
			resp.Body.Close()
		}
	}
	if ok != 16 {
		t.Errorf("%d of 16 health checks answered while one address held %d connections", ok, len(held))
	}
}
