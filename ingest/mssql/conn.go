package mssql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/azuread"
)

// Session is an open connection to one instance for one collection pass.
// Sources run one after the other on it, so it holds a single connection.
type Session struct {
	inst Instance
	db   *sql.DB
	// Major is the engine's major version (10 = 2008/2008 R2 … 17 = 2025),
	// known after Host; 0 before.
	Major int
	// Encrypt is the encryption setting the login used (EncryptStrict,
	// EncryptTrue, …): with encrypt unset, strict or its fallback.
	Encrypt string
}

// Connect reads the instance's secret, opens a pool of one connection and
// logs in. ctx bounds dialing; timeout bounds the login handshake too,
// which go-mssqldb does not tie to ctx (a server that accepts TCP but never
// answers would otherwise hold the caller forever). With encrypt unset it
// logs in over TDS 8 and, if the server does not speak it, over TDS 7.x
// TLS; both validate the server's certificate, and neither falls back to
// an unencrypted login. Every error it returns is an *Error whose text
// holds no part of the secret.
func Connect(ctx context.Context, in Instance, timeout time.Duration) (*Session, error) {
	pw, err := readSecret(&in)
	if err != nil {
		return nil, &Error{Source: SourceConnect, Kind: KindConfig, Msg: err.Error()}
	}
	modes := encryptModes(&in)
	for i, mode := range modes {
		try := in
		try.Encrypt = mode
		login := timeout
		if i+1 < len(modes) {
			// A server before 2022 may leave a ClientHello unanswered
			// (SqlClient meets a timeout there: dotnet/SqlClient#1905);
			// a third of the time leaves the rest to TDS 7.x.
			login = max(time.Second, timeout/3)
		}
		db, err := open(ctx, &try, pw, login)
		if err == nil {
			return &Session{inst: in, db: db, Encrypt: mode}, nil
		}
		if i+1 < len(modes) && mode == EncryptStrict && noTDS8(err) && ctx.Err() == nil {
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			if e = tlsFailure(&in, err); e == nil {
				if e = authFailure(&in, err); e == nil {
					e = classify(SourceConnect, err)
				}
			}
		}
		e.Msg = scrub(e.Msg, pw)
		return nil, e
	}
	panic("unreachable: encryptModes returns at least one setting")
}

// open logs in with in.Encrypt and returns the pool, or the driver's error.
func open(ctx context.Context, in *Instance, pw secret, timeout time.Duration) (*sql.DB, error) {
	dsn, err := buildAuthDSN(in, pw, timeout)
	if err != nil {
		return nil, &Error{Source: SourceConnect, Kind: KindConfig, Msg: err.Error()}
	}
	var conn *mssql.Connector
	switch {
	case in.Auth == AuthEntra && in.Entra == EntraToken:
		tok := string(pw)
		conn, err = mssql.NewConnectorWithAccessTokenProvider(dsn, func(context.Context) (string, error) { return tok, nil })
	case in.Auth == AuthEntra:
		// azuread asks Entra ID for a token at every login, so a token
		// that expired between passes is never reused.
		conn, err = azuread.NewConnector(dsn)
	default:
		conn, err = mssql.NewConnector(dsn)
	}
	if err != nil {
		if e := tlsFailure(in, err); e != nil {
			return nil, e
		}
		return nil, &Error{Source: SourceConnect, Kind: KindConfig, Msg: "connection settings: " + scrub(err.Error(), pw)}
	}
	var d *recordingDialer
	if in.Encrypt == EncryptStrict {
		// go-mssqldb bounds neither a TDS 8 handshake by the login
		// timeout nor the login by ctx: a server that never answers the
		// ClientHello would hold the connection for ever. Closing it
		// after the timeout ends the handshake.
		d = &recordingDialer{nd: net.Dialer{KeepAlive: 30 * time.Second}}
		conn.Dialer = d
		stop := time.AfterFunc(timeout, d.closeAll)
		defer stop.Stop()
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		if d != nil && d.closed() {
			err = fmt.Errorf("TLS Handshake failed: no answer to the TDS 8 ClientHello within %v: %w", timeout, err)
		}
		return nil, err
	}
	if d != nil && d.closed() {
		db.Close()
		return nil, fmt.Errorf("TLS Handshake failed: the login took longer than %v", timeout)
	}
	return db, nil
}

// recordingDialer dials TCP and keeps the connections it made, so that
// open can close a login that outlives its timeout.
type recordingDialer struct {
	nd     net.Dialer
	mu     sync.Mutex
	conns  []net.Conn
	closeD bool
}

// DialContext implements mssql.Dialer.
func (d *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closeD {
		c.Close()
		return nil, fmt.Errorf("dial %s: the login timed out", addr)
	}
	d.conns = append(d.conns, c)
	return c, nil
}

func (d *recordingDialer) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closeD = true
	for _, c := range d.conns {
		c.Close()
	}
}

func (d *recordingDialer) closed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closeD
}

// Close closes the connection.
func (s *Session) Close() error { return s.db.Close() }

// Instance returns the instance the session is connected to.
func (s *Session) Instance() Instance { return s.inst }

// buildDSN builds a go-mssqldb URL with every part escaped by net/url: a
// password holding '@', '/', '?', '%' or ';' cannot split the DSN.
func buildDSN(in *Instance, pw secret, timeout time.Duration) string {
	dsn, _ := buildAuthDSN(in, pw, timeout)
	return dsn
}

// buildAuthDSN is buildDSN with the error of an unusable Kerberos setting
// (a credential cache that is not a file).
func buildAuthDSN(in *Instance, pw secret, timeout time.Duration) (string, error) {
	u := url.URL{Scheme: "sqlserver", Host: in.Host}
	if in.Port != 0 {
		u.Host = net.JoinHostPort(in.Host, strconv.Itoa(in.Port))
	} else if strings.Contains(in.Host, ":") && !strings.HasPrefix(in.Host, "[") {
		u.Host = "[" + in.Host + "]" // a bare IPv6 address
	}
	if in.InstanceName != "" {
		u.Path = "/" + in.InstanceName
	}
	auth := map[string]string{}
	user, upw, err := in.authParams(auth, pw)
	switch {
	case user != "" && upw != "":
		u.User = url.UserPassword(user, string(upw))
	case user != "":
		u.User = url.User(user)
	}
	secs := strconv.Itoa(int(math.Ceil(timeout.Seconds())))
	q := url.Values{}
	for k, v := range auth {
		q.Set(k, v)
	}
	// master: every login can open it; the queries name msdb explicitly,
	// so a login without an msdb user still gets its host snapshot.
	q.Set("database", "master")
	q.Set("app name", "restorewatch")
	q.Set("dial timeout", secs)
	q.Set("connection timeout", secs)
	// Every TLS key is written, never left to go-mssqldb's defaults:
	// without encrypt it logs in unencrypted to a server that offers no
	// TLS and trusts any certificate.
	enc := in.Encrypt
	if enc == "" {
		enc = EncryptStrict
	}
	q.Set("encrypt", enc)
	if enc != EncryptDisable {
		q.Set("TrustServerCertificate", strconv.FormatBool(in.TrustServerCertificate && enc != EncryptStrict))
		if in.Certificate != "" {
			q.Set("certificate", in.Certificate)
		}
		if in.HostNameInCertificate != "" {
			q.Set("hostNameInCertificate", in.HostNameInCertificate)
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), err
}
