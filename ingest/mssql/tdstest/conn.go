package tdstest

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// pingSQL is the batch go-mssqldb sends for Ping; the server answers it
// itself so Handlers only deal with the application's queries.
const pingSQL = "select 1;"

// conn is one client connection. Its state is touched only by the serve
// goroutine; a second goroutine reads messages so that an attention can be
// noticed while a Handler is still running.
type conn struct {
	s          *Server
	nc         net.Conn
	spid       uint16
	packetSize int

	// rd and wr carry TDS packets once PRELOGIN is done: nc itself, or
	// a TLS session over it. enc says which.
	rd  io.Reader
	wr  io.Writer
	enc Encryption

	preloginDone bool
	loggedIn     bool
	user, db     string
	tranID       uint64 // active transaction descriptor, 0 if none
	tranSeq      uint64
	// fedAuthWait holds an ADAL login between FEDAUTHINFO and the
	// client's token.
	fedAuthWait *login7
}

func (c *conn) serve() {
	defer c.nc.Close()
	first, ok := c.negotiate()
	if !ok {
		return
	}
	if first != nil && !c.handle(*first, nil) {
		return
	}
	done := make(chan struct{})
	defer close(done)
	msgs := make(chan message)
	c.s.wg.Add(1) // the serve goroutine is counted, so this Add cannot race Wait
	go func() {
		defer c.s.wg.Done()
		defer close(msgs)
		for {
			m, err := readMessage(c.rd)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					c.s.logf("tdstest: spid %d: read: %v", c.spid, err)
				}
				return
			}
			if c.s.capture != nil {
				c.s.capture(m.typ, m.body)
			}
			select {
			case msgs <- m:
			case <-done:
				return
			}
		}
	}()
	for m := range msgs {
		if !c.handle(m, msgs) {
			return
		}
	}
}

// negotiate runs PRELOGIN and any TLS handshake before the reader
// goroutine starts, because the transport changes under it: TLS records
// inside PRELOGIN packets, then TLS or bare TDS. It returns the first
// message read after it for handle (the LOGIN7 of a login-only session),
// or nil; false closes the connection. A PRELOGIN that arrives while the
// server hangs, or a first message that is not PRELOGIN, is left to
// handle, which does not answer or rejects it.
func (c *conn) negotiate() (*message, bool) {
	c.rd, c.wr, c.enc = c.nc, c.nc, Unencrypted
	var b [1]byte
	if _, err := io.ReadFull(c.nc, b[:]); err != nil {
		return nil, false
	}
	raw := &replayConn{Conn: c.nc, head: b[:]}
	c.rd = raw
	if b[0] == tlsRecordHandshake {
		if c.s.hang.Load() || (!c.s.strictCapable() && c.s.cfg.TDS8Unanswered) {
			_, _ = io.Copy(io.Discard, raw) // never answered, until either side closes
			return nil, false
		}
		if !c.s.strictCapable() {
			// SQL Server before 2022 reads the ClientHello as a bad packet
			// and closes the connection.
			c.s.logf("tdstest: spid %d: TLS before PRELOGIN (TDS 8) is not served here: closing", c.spid)
			return nil, false
		}
		tc := tls.Server(raw, c.s.tds8TLS())
		if err := tc.Handshake(); err != nil {
			c.s.logf("tdstest: spid %d: TDS 8 TLS handshake: %v", c.spid, err)
			return nil, false
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != alpnTDS8 {
			c.s.logf("tdstest: spid %d: TDS 8 without ALPN %q (got %q): closing", c.spid, alpnTDS8, p)
			return nil, false
		}
		c.rd, c.wr, c.enc = tc, tc, Strict
	}
	m, err := c.read(c.rd)
	if err != nil {
		return nil, false
	}
	if m.typ != pktPrelogin || c.s.hang.Load() {
		return &m, true
	}
	opts, err := decodePrelogin(m.body)
	if err != nil {
		c.s.logf("tdstest: spid %d: %v", c.spid, err)
		return nil, false
	}
	answer := c.s.answerEncryption(opts[preEncryption][0], c.enc == Strict)
	c.preloginDone = true
	if !c.write(preloginReply(c.s.version, answer, c.s.cfg.FedAuth != nil)) {
		return nil, false
	}
	if c.enc == Strict || answer == encryptNotSup {
		return nil, true
	}
	// TDS 7.x: the handshake travels in PRELOGIN packets.
	fc := &framedConn{Conn: raw, framing: true, packetSize: c.packetSize}
	tc := tls.Server(fc, c.s.tds7TLS())
	if err := tc.Handshake(); err != nil {
		c.s.logf("tdstest: spid %d: TLS handshake in PRELOGIN: %v", c.spid, err)
		return nil, false
	}
	if err := fc.finish(); err != nil {
		c.s.logf("tdstest: spid %d: TLS handshake in PRELOGIN: %v", c.spid, err)
		return nil, false
	}
	if answer == encryptOff {
		// Login-only encryption: the LOGIN7 packet over TLS, the rest bare.
		c.enc = LoginOnly
		m, err := readFirstPacketOver(tc, raw)
		if err != nil {
			c.s.logf("tdstest: spid %d: read LOGIN7 over TLS: %v", c.spid, err)
			return nil, false
		}
		if c.s.capture != nil {
			c.s.capture(m.typ, m.body)
		}
		return &m, true
	}
	c.rd, c.wr, c.enc = tc, tc, TLS
	return nil, true
}

// read reads one message during negotiation and shows it to the capture
// hook.
func (c *conn) read(r io.Reader) (message, error) {
	m, err := readMessage(r)
	if err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.s.logf("tdstest: spid %d: read: %v", c.spid, err)
		}
		return m, err
	}
	if c.s.capture != nil {
		c.s.capture(m.typ, m.body)
	}
	return m, nil
}

// handle processes one message; false closes the connection.
func (c *conn) handle(m message, msgs <-chan message) bool {
	hung := c.s.hang.Load()
	switch {
	case m.typ == pktPrelogin && !c.preloginDone:
		if hung {
			return true
		}
		c.preloginDone = true
		return c.write(preloginReply(c.s.version, encryptNotSup, c.s.cfg.FedAuth != nil))
	case m.typ == pktLogin7 && c.preloginDone && !c.loggedIn && c.fedAuthWait == nil:
		return c.login(m.body, hung)
	case m.typ == pktFedAuthToken && c.fedAuthWait != nil && !c.loggedIn:
		l := *c.fedAuthWait
		c.fedAuthWait = nil
		tok, err := decodeFedAuthToken(m.body)
		if err != nil {
			c.s.logf("tdstest: spid %d: %v", c.spid, err)
			return false
		}
		return c.fedAuthLogin(l, tok)
	case !c.loggedIn:
		c.s.logf("tdstest: spid %d: unexpected packet type %#x before login", c.spid, m.typ)
		return false
	case m.typ == pktAttention:
		// An attention after the reply was complete: the client's context
		// ended just as the answer arrived. It still wants its DONE ATTN.
		if hung {
			return true
		}
		return c.write(appendDone(nil, tokDone, doneAttn, 0, 0))
	case m.typ == pktBatch || m.typ == pktRPC || m.typ == pktTransMgr:
		return c.request(m, msgs)
	}
	c.s.logf("tdstest: spid %d: unsupported packet type %#x", c.spid, m.typ)
	return false
}

func (c *conn) login(body []byte, hung bool) bool {
	l, err := decodeLogin7(body)
	if err != nil {
		c.s.logf("tdstest: spid %d: %v", c.spid, err)
		return false
	}
	rec := Login{User: l.User, Auth: AuthSQL, Encryption: c.enc, TDSVersion: l.TDSVersion}
	if hung {
		c.s.recordLogin(rec)
		return true
	}
	cfg := c.s.cfg
	switch {
	case l.SSPI:
		rec.Auth = AuthKerberos
		if cfg.Kerberos == nil {
			rec.Refused = "integrated logins are not configured (Config.Kerberos)"
		} else if principal, err := acceptKerberos(cfg.Kerberos, l.SSPIToken); err != nil {
			rec.User, rec.Refused = principal, err.Error()
		} else {
			rec.User = principal
			c.s.recordLogin(rec)
			return c.accept(l, principal)
		}
		c.s.recordLogin(rec)
		c.s.logf("tdstest: spid %d: integrated login refused: %s", c.spid, rec.Refused)
		c.write(loginFailedWindows())
		return false
	case l.FedAuth != nil && l.FedAuth.library == fedLibADAL && cfg.FedAuth != nil:
		// The client waits for FEDAUTHINFO, then sends its token.
		c.fedAuthWait = &l
		return c.write(fedAuthInfoReply())
	case l.FedAuth != nil:
		return c.fedAuthLogin(l, l.FedAuth.token)
	}
	c.s.recordLogin(rec)
	anyLogin := cfg.User == "" && cfg.Password == ""
	if !anyLogin && (l.User != cfg.User || l.Password != cfg.Password) {
		c.s.logf("tdstest: spid %d: login failed for user %q", c.spid, l.User)
		c.write(loginFailedReply(l.User))
		return false
	}
	return c.accept(l, l.User)
}

// fedAuthLogin checks an Entra ID token with Config.FedAuth.
func (c *conn) fedAuthLogin(l login7, token string) bool {
	rec := Login{Auth: AuthFedAuth, Token: token, Encryption: c.enc, TDSVersion: l.TDSVersion}
	if c.s.cfg.FedAuth == nil {
		rec.Refused = "Entra ID logins are not configured (Config.FedAuth)"
	} else if principal, err := c.s.cfg.FedAuth(token); err != nil {
		rec.Refused = err.Error()
	} else {
		rec.User = principal
		c.s.recordLogin(rec)
		return c.accept(l, principal)
	}
	c.s.recordLogin(rec)
	c.s.logf("tdstest: spid %d: Entra ID login refused: %s", c.spid, rec.Refused)
	c.write(loginFailedReply("<token-identified principal>"))
	return false
}

// accept completes a login with LOGINACK.
func (c *conn) accept(l login7, user string) bool {
	// Replies must not exceed the packet size the client asked for: it
	// sized its read buffer with it. The spec's range is 512..32767.
	c.packetSize = int(min(max(l.PacketSize, 512), 32767))
	c.user, c.db = user, l.Database
	if c.db == "" {
		c.db = "master"
	}
	c.loggedIn = true
	c.s.logf("tdstest: spid %d: %q logged in to %q (app %q)", c.spid, c.user, c.db, l.AppName)
	return c.write(loginAckReply(c.db, c.packetSize, c.s.version))
}

// request decodes, records and answers a batch, RPC or transaction request.
func (c *conn) request(m message, msgs <-chan message) bool {
	var q Query
	var err error
	var tm uint16
	switch m.typ {
	case pktBatch:
		q.Kind = KindBatch
		q.SQL, err = decodeBatch(m.body)
	case pktRPC:
		q, err = decodeRPC(m.body)
	case pktTransMgr:
		q.Kind = KindTransaction
		tm, err = decodeTransMgr(m.body)
		q.SQL = map[uint16]string{tmBegin: "BEGIN TRANSACTION", tmCommit: "COMMIT TRANSACTION",
			tmRollback: "ROLLBACK TRANSACTION"}[tm]
	}
	q.User, q.Database = c.user, c.db
	if err != nil {
		// SQL Server would drop the connection on a malformed request; an
		// error token tells the test what was wrong instead.
		c.s.logf("tdstest: spid %d: %v", c.spid, err)
		if c.s.hang.Load() {
			return true
		}
		return c.write(errorReply(Error{Number: 50000, State: 1, Class: 16, Message: err.Error()}))
	}
	c.s.record(q)
	if c.s.dropNext.CompareAndSwap(true, false) {
		c.s.logf("tdstest: spid %d: dropping connection (DropNext)", c.spid)
		return false
	}
	if c.s.hang.Load() {
		return true
	}
	switch {
	case q.Kind == KindTransaction:
		return c.write(c.transaction(tm))
	case q.Kind == KindBatch && q.SQL == pingSQL:
		return c.write(pingReply())
	}
	return c.run(q, msgs)
}

// run calls the Handler in its own goroutine and waits for either its
// answer or the client's next message, which can only be an attention
// (go-mssqldb sends one when the query's context ends). On attention the
// Handler's context is cancelled, its answer discarded and DONE ATTN sent,
// which is what the driver waits for before reusing the connection.
func (c *conn) run(q Query, msgs <-chan message) bool {
	ctx, cancel := context.WithCancel(c.s.ctx)
	defer cancel()
	type result struct {
		sets []ResultSet
		err  error
	}
	resCh := make(chan result, 1)
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		defer func() {
			if p := recover(); p != nil {
				resCh <- result{err: fmt.Errorf("tdstest: handler panicked: %v", p)}
			}
		}()
		if c.s.cfg.Handler == nil {
			resCh <- result{}
			return
		}
		sets, err := c.s.cfg.Handler.Handle(ctx, q)
		resCh <- result{sets, err}
	}()
	select {
	case r := <-resCh:
		reply, err := buildReply(r.sets, r.err)
		if err != nil {
			c.s.logf("tdstest: spid %d: %v", c.spid, err)
			reply = errorReply(Error{Number: 50000, State: 1, Class: 16, Message: err.Error()})
		}
		if c.s.hang.Load() {
			return true
		}
		return c.write(reply)
	case m, ok := <-msgs:
		cancel()
		<-resCh
		if !ok {
			return false
		}
		if m.typ != pktAttention {
			c.s.logf("tdstest: spid %d: packet type %#x while a request is running", c.spid, m.typ)
			return false
		}
		if c.s.hang.Load() {
			return true
		}
		return c.write(appendDone(nil, tokDone, doneAttn, 0, 0))
	case <-c.s.ctx.Done():
		return false
	}
}

// transaction answers BeginTx, Commit and Rollback with the ENVCHANGE
// go-mssqldb expects: BEGIN returns a new 8-byte descriptor (which the
// driver echoes in later ALL_HEADERS), COMMIT/ROLLBACK return it as the
// old value. Nothing is isolated or undone; Handlers see ordinary queries.
func (c *conn) transaction(tm uint16) []byte {
	desc := func(id uint64) []byte { return binary.LittleEndian.AppendUint64(nil, id) }
	var b []byte
	switch tm {
	case tmBegin:
		if c.tranID != 0 {
			return errorReply(Error{Number: 50000, Message: "tdstest: nested transactions are not supported"})
		}
		c.tranSeq++
		c.tranID = c.tranSeq
		b = appendEnvChangeBytes(b, envBeginTran, desc(c.tranID), nil)
	default:
		if c.tranID == 0 {
			if tm == tmCommit {
				return errorReply(Error{Number: 3902, State: 1, Class: 16,
					Message: "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION."})
			}
			return errorReply(Error{Number: 3903, State: 1, Class: 16,
				Message: "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION."})
		}
		typ := byte(envCommitTran)
		if tm == tmRollback {
			typ = envRollback
		}
		b = appendEnvChangeBytes(b, typ, nil, desc(c.tranID))
		c.tranID = 0
	}
	return appendDone(b, tokDone, doneFinal, 0, 0)
}

func (c *conn) write(reply []byte) bool {
	if err := writeMessage(c.wr, pktReply, reply, c.packetSize, c.spid); err != nil {
		if !errors.Is(err, net.ErrClosed) {
			c.s.logf("tdstest: spid %d: write: %v", c.spid, err)
		}
		return false
	}
	return true
}
