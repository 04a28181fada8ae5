package tdstest

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
)

// Encryption says how a LOGIN7, and the session after it, reached the
// server.
type Encryption int

// How a login travelled. Only Unencrypted puts the password on the wire
// readable by anyone on the path (LOGIN7 merely XORs it).
const (
	// Unencrypted: no TLS at all (the server or the client said
	// ENCRYPT_NOT_SUP in PRELOGIN).
	Unencrypted Encryption = iota + 1
	// LoginOnly: TDS 7.x with ENCRYPT_OFF on both sides: the TLS
	// handshake runs inside PRELOGIN packets, the LOGIN7 packet goes
	// over TLS and everything after it in clear.
	LoginOnly
	// TLS: TDS 7.x with ENCRYPT_ON: the handshake runs inside PRELOGIN
	// packets, then every packet from LOGIN7 on goes over TLS.
	TLS
	// Strict: TDS 8 (encrypt=strict): TLS with ALPN "tds/8.0" from the
	// first byte, PRELOGIN included.
	Strict
)

// String names the encryption, for test failure messages.
func (e Encryption) String() string {
	switch e {
	case Unencrypted:
		return "unencrypted"
	case LoginOnly:
		return "login only"
	case TLS:
		return "TLS"
	case Strict:
		return "strict (TDS 8)"
	}
	return fmt.Sprintf("Encryption(%d)", int(e))
}

// Login is one LOGIN7 the server received, successful or not. The password
// is not kept.
type Login struct {
	// User is the SQL login, the Kerberos principal (name@REALM) or the
	// principal the Entra ID token named.
	User string
	// Auth is AuthSQL, AuthKerberos or AuthFedAuth.
	Auth string
	// Token is the Entra ID access token the login carried.
	Token string
	// Refused says why the server refused the login; "" when it succeeded.
	Refused    string
	Encryption Encryption
	// TDSVersion is the version the client asked for in LOGIN7:
	// 0x74000004 for TDS 7.4, 0x08000000 for TDS 8.
	TDSVersion uint32
}

// PRELOGIN ENCRYPTION values (MS-TDS 2.2.6.5); go-mssqldb sends 4 for
// encrypt=strict, inside the TLS session.
const (
	encryptOff    = 0x00
	encryptOn     = 0x01
	encryptNotSup = 0x02
	encryptReq    = 0x03
	encryptStrict = 0x04
)

// alpnTDS8 is the application protocol a TDS 8 client offers.
const alpnTDS8 = "tds/8.0"

// tlsRecordHandshake is the first byte of a TLS ClientHello: a TDS 8 client
// sends it where a TDS 7.x client sends a PRELOGIN packet (type 0x12).
const tlsRecordHandshake = 0x16

// strictCapable reports whether the server accepts TDS 8: a certificate is
// configured and the version is SQL Server 2022 (16.x) or later, the first
// release to speak TDS 8.
func (s *Server) strictCapable() bool {
	return s.cfg.TLS != nil && s.version.major >= 16
}

// tds7TLS is the configuration of a handshake carried in PRELOGIN packets.
// It stops at TLS 1.2, as SQL Server does before TDS 8, and sends no
// session tickets: go-mssqldb reads the handshake one PRELOGIN message per
// flight, and a ticket sent after the server's Finished would land in a
// message it never reads.
func (s *Server) tds7TLS() *tls.Config {
	c := s.cfg.TLS.Clone()
	c.MaxVersion = tls.VersionTLS12
	c.SessionTicketsDisabled = true
	c.NextProtos = nil
	return c
}

// tds8TLS is the configuration of a TDS 8 connection: TLS 1.2 or later
// with the "tds/8.0" application protocol.
func (s *Server) tds8TLS() *tls.Config {
	c := s.cfg.TLS.Clone()
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	c.SessionTicketsDisabled = true
	c.NextProtos = []string{alpnTDS8}
	return c
}

// answerEncryption is the server's PRELOGIN ENCRYPTION answer to the
// client's request, as SQL Server with a certificate and without "Force
// Encryption" gives it: a client that asks for encryption gets it, one
// that offers it only for the login (ENCRYPT_OFF) gets login-only
// encryption, one that cannot encrypt gets none. Without a certificate
// the answer is always ENCRYPT_NOT_SUP. Inside TDS 8 the session is
// already encrypted and the driver ignores the answer.
func (s *Server) answerEncryption(client byte, strict bool) byte {
	switch {
	case strict:
		return encryptOn
	case s.cfg.TLS == nil:
		return encryptNotSup
	}
	switch client {
	case encryptOff:
		return encryptOff
	case encryptNotSup:
		return encryptNotSup
	}
	return encryptOn
}

// decodePrelogin parses a client PRELOGIN message (MS-TDS 2.2.6.5): an
// option table of (token, big-endian offset, big-endian length) entries
// ended by 0xFF, then the option data. Offsets are relative to the start
// of the message and each is bounds-checked.
func decodePrelogin(b []byte) (map[byte][]byte, error) {
	opts := map[byte][]byte{}
	for i := 0; ; i += 5 {
		if i >= len(b) {
			return nil, fmt.Errorf("tds: PRELOGIN option table has no terminator")
		}
		tok := b[i]
		if tok == preTerminator {
			break
		}
		if i+5 > len(b) {
			return nil, fmt.Errorf("tds: PRELOGIN option %#x truncated", tok)
		}
		off := int(binary.BigEndian.Uint16(b[i+1:]))
		n := int(binary.BigEndian.Uint16(b[i+3:]))
		if off+n > len(b) {
			return nil, fmt.Errorf("tds: PRELOGIN option %#x (offset %d, %d bytes) outside the message of %d bytes", tok, off, n, len(b))
		}
		if _, dup := opts[tok]; dup {
			return nil, fmt.Errorf("tds: PRELOGIN option %#x given twice", tok)
		}
		opts[tok] = b[off : off+n]
	}
	if v, ok := opts[preEncryption]; !ok || len(v) != 1 {
		return nil, fmt.Errorf("tds: PRELOGIN without a one-byte ENCRYPTION option")
	}
	return opts, nil
}

// replayConn is a connection whose first bytes were already read (to tell
// a TLS ClientHello from a PRELOGIN packet); Read returns them first.
type replayConn struct {
	net.Conn
	head []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// framedConn carries a TDS 7.x TLS handshake inside PRELOGIN packets, as
// go-mssqldb's tlsHandshakeConn does on the client side: reads return the
// payload of the client's PRELOGIN messages; writes are collected and sent
// as one PRELOGIN message when the server next reads, so that each flight
// of the handshake is one message (go-mssqldb reads one message per
// flight). Once the handshake is done, finish sends the last flight and
// the connection carries raw TLS records.
type framedConn struct {
	net.Conn
	framing    bool
	rbuf, wbuf []byte
	packetSize int
}

func (c *framedConn) Read(p []byte) (int, error) {
	if !c.framing {
		return c.Conn.Read(p)
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	for len(c.rbuf) == 0 {
		m, err := readMessage(c.Conn)
		if err != nil {
			return 0, err
		}
		if m.typ != pktPrelogin {
			return 0, fmt.Errorf("tds: packet type %#x during the TLS handshake, want PRELOGIN", m.typ)
		}
		c.rbuf = m.body
	}
	n := copy(p, c.rbuf)
	c.rbuf = c.rbuf[n:]
	return n, nil
}

func (c *framedConn) Write(p []byte) (int, error) {
	if !c.framing {
		return c.Conn.Write(p)
	}
	c.wbuf = append(c.wbuf, p...)
	return len(p), nil
}

func (c *framedConn) flush() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	err := writeMessage(c.Conn, pktPrelogin, c.wbuf, c.packetSize, 0)
	c.wbuf = nil
	return err
}

// finish sends what the handshake left unsent and ends the framing.
func (c *framedConn) finish() error {
	err := c.flush()
	c.framing = false
	if len(c.rbuf) > 0 && err == nil {
		err = fmt.Errorf("tds: %d bytes of handshake left unread", len(c.rbuf))
	}
	return err
}

// readFirstPacketOver reads one client message whose first packet comes
// through first and any further packets through rest: with login-only
// encryption go-mssqldb sends the first packet of LOGIN7 over TLS and
// switches to the bare connection after it.
func readFirstPacketOver(first, rest io.Reader) (message, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(first, hdr[:]); err != nil {
		return message{}, err
	}
	size := int(binary.BigEndian.Uint16(hdr[2:4]))
	if size < headerLen {
		return message{}, fmt.Errorf("tds: packet length %d shorter than header", size)
	}
	body := make([]byte, size-headerLen)
	if _, err := io.ReadFull(first, body); err != nil {
		return message{}, fmt.Errorf("tds: short packet: %w", err)
	}
	m := message{typ: hdr[0], body: body}
	if hdr[1]&statusEOM != 0 {
		return m, nil
	}
	more, err := readMessage(rest)
	if err != nil {
		return m, err
	}
	if more.typ != m.typ {
		return m, fmt.Errorf("tds: packet type changed from %#x to %#x inside a message", m.typ, more.typ)
	}
	if len(m.body)+len(more.body) > maxMessage {
		return m, fmt.Errorf("tds: message longer than %d bytes", maxMessage)
	}
	m.body = append(m.body, more.body...)
	return m, nil
}
