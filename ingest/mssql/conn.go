package mssql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

// Session is an open connection to one instance for one collection pass.
// Sources run one after the other on it, so it holds a single connection.
type Session struct {
	inst Instance
	db   *sql.DB
	// Major is the engine's major version (10 = 2008/2008 R2 … 17 = 2025),
	// known after Host; 0 before.
	Major int
}

// Connect reads the instance's secret, opens a pool of one connection and
// logs in. ctx bounds dialing; timeout bounds the login handshake too,
// which go-mssqldb does not tie to ctx (a server that accepts TCP but never
// answers would otherwise hold the caller forever). Every error it returns
// is an *Error whose text holds no part of the secret.
func Connect(ctx context.Context, in Instance, timeout time.Duration) (*Session, error) {
	pw, err := readSecret(&in)
	if err != nil {
		return nil, &Error{Source: SourceConnect, Kind: KindConfig, Msg: err.Error()}
	}
	dsn := buildDSN(&in, pw, timeout)
	var conn driver.Connector
	if in.Auth == "entra" {
		tok := string(pw)
		conn, err = mssql.NewConnectorWithAccessTokenProvider(dsn, func(context.Context) (string, error) { return tok, nil })
	} else {
		conn, err = mssql.NewConnector(dsn)
	}
	if err != nil {
		return nil, &Error{Source: SourceConnect, Kind: KindConfig, Msg: "connection settings: " + scrub(err.Error(), pw)}
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		e := classify(SourceConnect, err)
		e.Msg = scrub(e.Msg, pw)
		return nil, e
	}
	return &Session{inst: in, db: db}, nil
}

// Close closes the connection.
func (s *Session) Close() error { return s.db.Close() }

// Instance returns the instance the session is connected to.
func (s *Session) Instance() Instance { return s.inst }

// buildDSN builds a go-mssqldb URL with every part escaped by net/url: a
// password holding '@', '/', '?', '%' or ';' cannot split the DSN.
func buildDSN(in *Instance, pw secret, timeout time.Duration) string {
	u := url.URL{Scheme: "sqlserver", Host: in.Host}
	if in.Port != 0 {
		u.Host = net.JoinHostPort(in.Host, strconv.Itoa(in.Port))
	} else if strings.Contains(in.Host, ":") && !strings.HasPrefix(in.Host, "[") {
		u.Host = "[" + in.Host + "]" // a bare IPv6 address
	}
	if in.InstanceName != "" {
		u.Path = "/" + in.InstanceName
	}
	switch {
	case in.Auth == "entra":
		// The token goes through the connector, not the URL.
	case in.User != "":
		u.User = url.UserPassword(in.User, string(pw))
	}
	secs := strconv.Itoa(int(math.Ceil(timeout.Seconds())))
	q := url.Values{}
	// master: every login can open it; the queries name msdb explicitly,
	// so a login without an msdb user still gets its host snapshot.
	q.Set("database", "master")
	q.Set("app name", "restorewatch")
	q.Set("dial timeout", secs)
	q.Set("connection timeout", secs)
	if in.Encrypt != "" {
		q.Set("encrypt", strings.ToLower(in.Encrypt))
	}
	if in.TrustServerCertificate {
		q.Set("TrustServerCertificate", "true")
	}
	if in.Certificate != "" {
		q.Set("certificate", in.Certificate)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
