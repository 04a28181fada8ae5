package tdstest

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// PRELOGIN option tokens (MS-TDS 2.2.6.5).
const (
	preVersion    = 0x00
	preEncryption = 0x01
	preInstOpt    = 0x02
	preThreadID   = 0x03
	preMARS       = 0x04
	preTerminator = 0xFF
)

const defaultVersion = "16.0.1000.6"

// version is a SQL Server version as reported in PRELOGIN and LOGINACK.
type version struct {
	major, minor byte
	build, sub   uint16
}

// parseVersion reads "major.minor.build.revision"; missing parts are zero.
func parseVersion(s string) (version, error) {
	if s == "" {
		s = defaultVersion
	}
	var n [4]uint64
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return version{}, fmt.Errorf("tdstest: bad ServerVersion %q", s)
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 16)
		if err != nil || (i < 2 && v > 255) {
			return version{}, fmt.Errorf("tdstest: bad ServerVersion %q", s)
		}
		n[i] = v
	}
	return version{byte(n[0]), byte(n[1]), uint16(n[2]), uint16(n[3])}, nil
}

// preloginReply builds the server's PRELOGIN response: an option table of
// (token, BE offset, BE length) entries, a terminator, then the data.
// encrypt is the ENCRYPTION answer: ENCRYPT_NOT_SUP tells the client the
// server cannot encrypt (with encrypt=disable or false go-mssqldb then
// sends LOGIN7 in clear; with encrypt=true it refuses to go on).
func preloginReply(v version, encrypt byte, fedAuth bool) []byte {
	opts := []struct {
		token byte
		data  []byte
	}{
		{preVersion, []byte{v.major, v.minor, byte(v.build >> 8), byte(v.build), byte(v.sub >> 8), byte(v.sub)}},
		{preEncryption, []byte{encrypt}},
		{preInstOpt, []byte{0}},
		{preThreadID, nil},
		{preMARS, []byte{0}},
	}
	if fedAuth {
		// FEDAUTHREQUIRED: go-mssqldb's Entra ID workflows refuse a
		// server that does not offer it.
		opts = append(opts, struct {
			token byte
			data  []byte
		}{preFedAuthReq, []byte{1}})
	}
	off := 5*len(opts) + 1
	var head, data []byte
	for _, o := range opts {
		head = append(head, o.token)
		head = binary.BigEndian.AppendUint16(head, uint16(off+len(data)))
		head = binary.BigEndian.AppendUint16(head, uint16(len(o.data)))
		data = append(data, o.data...)
	}
	head = append(head, preTerminator)
	return append(head, data...)
}

// login7 holds the LOGIN7 fields the server uses.
type login7 struct {
	TDSVersion uint32
	PacketSize uint32
	User       string
	Password   string
	AppName    string
	HostName   string
	ServerName string
	Database   string
	Language   string
	SSPI       bool // integrated (Windows) authentication was requested
	SSPIToken  []byte
	FedAuth    *fedAuthRequest // an Entra ID login
}

// login7FixedLen is the length of LOGIN7's fixed part up to and including
// SSPILongLength (TDS 7.2+).
const login7FixedLen = 94

// Offsets of the (offset, length) pairs inside LOGIN7's fixed part.
const (
	offHostName   = 36
	offUserName   = 40
	offPassword   = 44
	offAppName    = 48
	offServerName = 52
	offLanguage   = 64
	offDatabase   = 68
	fIntSecurity  = 0x80 // OptionFlags2: integrated security
)

// decodeLogin7 parses a LOGIN7 message (MS-TDS 2.2.6.4). Variable fields
// are located by offsets relative to the start of the message and lengths
// in UTF-16 units, so each is bounds-checked on its own.
func decodeLogin7(b []byte) (login7, error) {
	var l login7
	if len(b) < login7FixedLen {
		return l, fmt.Errorf("tds: LOGIN7 of %d bytes, need at least %d", len(b), login7FixedLen)
	}
	if n := binary.LittleEndian.Uint32(b); int64(n) > int64(len(b)) {
		return l, fmt.Errorf("tds: LOGIN7 length field %d exceeds message length %d", n, len(b))
	}
	l.TDSVersion = binary.LittleEndian.Uint32(b[4:])
	l.PacketSize = binary.LittleEndian.Uint32(b[8:])
	l.SSPI = b[25]&fIntSecurity != 0
	field := func(at int) ([]byte, error) {
		off := int(binary.LittleEndian.Uint16(b[at:]))
		n := 2 * int(binary.LittleEndian.Uint16(b[at+2:]))
		if n == 0 {
			return nil, nil
		}
		if off+n > len(b) {
			return nil, fmt.Errorf("tds: LOGIN7 field at %d (offset %d, %d bytes) outside message", at, off, n)
		}
		return b[off : off+n], nil
	}
	var err error
	str := func(at int) string {
		v, e := field(at)
		if e != nil && err == nil {
			err = e
		}
		return fromUCS2(v)
	}
	l.HostName = str(offHostName)
	l.User = str(offUserName)
	l.AppName = str(offAppName)
	l.ServerName = str(offServerName)
	l.Language = str(offLanguage)
	l.Database = str(offDatabase)
	pw, e := field(offPassword)
	if e != nil && err == nil {
		err = e
	}
	l.Password = fromUCS2(unmanglePassword(pw))
	if err == nil {
		err = decodeLoginAuth(b, &l)
	}
	return l, err
}

// unmanglePassword undoes the LOGIN7 password obfuscation: the client
// swapped the nibbles of every byte and XORed it with 0xA5.
func unmanglePassword(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		c ^= 0xA5
		out[i] = c<<4 | c>>4
	}
	return out
}

// Token types the server writes (MS-TDS 2.2.7).
const (
	tokColMetadata = 0x81
	tokError       = 0xAA
	tokLoginAck    = 0xAD
	tokRow         = 0xD1
	tokEnvChange   = 0xE3
	tokDone        = 0xFD
)

// ENVCHANGE types.
const (
	envDatabase   = 1
	envPacketSize = 4
	envBeginTran  = 8
	envCommitTran = 9
	envRollback   = 10
)

// tdsVersion74 is the TDS version acknowledged in LOGINACK. go-mssqldb
// compares it with 7.3 to decide to send time.Time as datetimeoffset, so it
// must not be lower.
const tdsVersion74 = 0x74000004

// loginAckReply is the token stream of a successful login: the database
// and packet size ENVCHANGEs, LOGINACK and a final DONE. go-mssqldb keeps
// reading replies until it has seen LOGINACK.
func loginAckReply(database string, packetSize int, v version) []byte {
	var b []byte
	b = appendEnvChangeStrings(b, envDatabase, database, "master")
	ps := strconv.Itoa(packetSize)
	b = appendEnvChangeStrings(b, envPacketSize, ps, ps)

	var ack []byte
	ack = append(ack, 1) // interface: SQL_TSQL
	ack = binary.BigEndian.AppendUint32(ack, tdsVersion74)
	ack = appendBVarChar(ack, "Microsoft SQL Server")
	ack = append(ack, v.major, v.minor, byte(v.build>>8), byte(v.build))
	b = append(b, tokLoginAck)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(ack)))
	b = append(b, ack...)
	return appendDone(b, tokDone, 0, 0, 0)
}

// loginFailedReply is SQL Server's answer to bad credentials: error 18456,
// class 14, then DONE with the error bit. go-mssqldb reports it as
// "login error: mssql: Login failed for user 'x'.".
func loginFailedReply(user string) []byte {
	b := appendError(nil, Error{Number: 18456, State: 1, Class: 14,
		Message: fmt.Sprintf("Login failed for user '%s'.", user)})
	return appendDone(b, tokDone, doneError, 0, 0)
}

// appendEnvChangeStrings appends an ENVCHANGE whose new and old values
// are B_VARCHARs.
func appendEnvChangeStrings(b []byte, typ byte, newV, oldV string) []byte {
	body := []byte{typ}
	body = appendBVarChar(body, newV)
	body = appendBVarChar(body, oldV)
	b = append(b, tokEnvChange)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

// appendEnvChangeBytes appends an ENVCHANGE whose new and old values are
// B_VARBYTEs (the transaction descriptor changes).
func appendEnvChangeBytes(b []byte, typ byte, newV, oldV []byte) []byte {
	body := []byte{typ, byte(len(newV))}
	body = append(body, newV...)
	body = append(body, byte(len(oldV)))
	body = append(body, oldV...)
	b = append(b, tokEnvChange)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}
