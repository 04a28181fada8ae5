package tdstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
)

// Server is a TDS listener on 127.0.0.1. Create it with New, then Start;
// Close it when the test ends (t.Cleanup(func() { s.Close() })).
type Server struct {
	cfg     Config
	version version
	verErr  error

	// ctx is the parent of every Handler context; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // accept loop, connections, readers, handlers

	hang     atomic.Bool
	dropNext atomic.Bool

	mu       sync.Mutex
	ln       net.Listener
	closed   bool
	conns    map[*conn]struct{}
	queries  []Query
	logins   []Login
	spid     uint16
	accepted int // connections accepted

	// capture, if set before Start, sees every client message (tests
	// use it to collect fuzz seeds). Called from connection goroutines.
	capture func(typ byte, body []byte)
}

// New returns a Server for cfg; it does not listen until Start.
func New(cfg Config) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	v, err := parseVersion(cfg.ServerVersion)
	return &Server{cfg: cfg, version: v, verErr: err, ctx: ctx, cancel: cancel,
		conns: map[*conn]struct{}{}, spid: 50}
}

// Start listens on 127.0.0.1 with a free port and serves connections in
// the background. addr is "127.0.0.1:port", ready for a DSN such as
// "sqlserver://user:pass@"+addr+"?database=msdb&encrypt=disable".
func (s *Server) Start() (addr string, err error) {
	if s.verErr != nil {
		return "", s.verErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("tdstest: server is closed")
	}
	if s.ln != nil {
		return "", errors.New("tdstest: server already started")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("tdstest: listen: %w", err)
	}
	s.ln = ln
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return ln.Addr().String(), nil
}

// Addr returns the listening address, "127.0.0.1:port", or "" before
// Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if !s.isClosed() {
				s.logf("tdstest: accept: %v", err)
			}
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.spid++
		s.accepted++
		c := &conn{s: s, nc: nc, spid: s.spid, packetSize: 4096}
		s.conns[c] = struct{}{}
		// Add while holding mu and before Close can see closed=true, so
		// Close's Wait never races with this Add.
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops listening, closes every connection (also hung ones), cancels
// running Handlers and waits for all goroutines. It is safe to call more
// than once.
func (s *Server) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	ln := s.ln
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if !already {
		s.cancel()
		if ln != nil {
			ln.Close()
		}
	}
	for _, c := range conns {
		c.nc.Close()
	}
	s.wg.Wait()
	return nil
}

// Hang switches hung-instance simulation on or off. While on, connections
// are still accepted and every message is read and recorded, but nothing
// is ever answered: no PRELOGIN reply, no login, no results, no attention
// acknowledgement. Messages that arrive while hung stay unanswered after
// Hang(false). Close still returns promptly.
//
// Against a hung server go-mssqldb behaves like this: a query on an open
// connection returns once its context is done plus the driver's 5 s wait
// for the attention acknowledgement; a new connection blocks in PRELOGIN
// regardless of the context (only the DSN's "connection timeout" bounds
// it), because go-mssqldb applies the context only to dialing.
func (s *Server) Hang(on bool) { s.hang.Store(on) }

// DropNext makes the server close, without any answer, the connection on
// which the next request (SQL batch, RPC or transaction request) arrives.
// The request is still recorded in Queries.
func (s *Server) DropNext() { s.dropNext.Store(true) }

// Queries returns a copy of all queries received so far, in arrival order
// across all connections, including the driver's ping ("select 1;") and
// transaction requests.
func (s *Server) Queries() []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Query(nil), s.queries...)
}

// ResetQueries forgets the queries received so far.
func (s *Server) ResetQueries() {
	s.mu.Lock()
	s.queries = nil
	s.mu.Unlock()
}

// Accepted returns how many connections the server has accepted, including
// those closed before any login (a TDS 8 ClientHello to a server that does
// not speak TDS 8, a refused certificate).
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Logins returns every LOGIN7 received so far, in arrival order, with how
// it was encrypted.
func (s *Server) Logins() []Login {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Login(nil), s.logins...)
}

func (s *Server) recordLogin(l Login) {
	s.mu.Lock()
	s.logins = append(s.logins, l)
	s.mu.Unlock()
}

func (s *Server) record(q Query) {
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}
