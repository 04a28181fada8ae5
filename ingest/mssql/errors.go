package mssql

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"
)

// Source names, used in run records and watermarks.
const (
	SourceConnect  = "connect"
	SourceHost     = "host"
	SourceHistory  = "history"
	SourceErrorLog = "errorlog"
	SourceAgent    = "agent"
	SourceInflight = "inflight"
	SourceCMS      = "cms"
)

// ErrorKind classifies a failure by what the collector should do about it.
type ErrorKind string

// Failure kinds. Permission and Missing degrade one source (or one part of
// the host snapshot); the others end the instance's pass.
const (
	KindPermission ErrorKind = "permission" // 229, 297, 300, 262, 15247, 8189, 15003, 916
	KindMissing    ErrorKind = "missing"    // 207, 208, 2812, 4121: an older build lacks the column or object
	KindServer     ErrorKind = "server"     // any other error the server reported for one statement
	KindLogin      ErrorKind = "login"      // 18456 and friends: wrong credentials, disabled login
	KindNetwork    ErrorKind = "network"    // dial, reset, EOF, TLS: the connection is gone
	KindTimeout    ErrorKind = "timeout"    // the pass's deadline passed
	KindConfig     ErrorKind = "config"     // unset secret, unusable settings
	KindCanceled   ErrorKind = "canceled"   // the collector is stopping
)

// Error is the failure of one source or of the connection. Its text is meant
// for the run record and the log: it says what failed and what to do, and
// never holds a secret.
type Error struct {
	Source string
	Kind   ErrorKind
	Number int32 // SQL Server error number; 0 when the error did not come from the server
	Msg    string
}

// Error implements error.
func (e *Error) Error() string { return e.Source + ": " + e.Msg }

// Fatal reports whether the error ends the pass: the connection is unusable
// or the time is up. Permission, missing-object and other statement errors
// degrade only their source.
func (e *Error) Fatal() bool {
	switch e.Kind {
	case KindPermission, KindMissing, KindServer:
		return false
	}
	return true
}

// IsFatal reports whether err ends the pass (see Error.Fatal); an error
// that is not an *Error is fatal.
func IsFatal(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Fatal()
	}
	return err != nil
}

// hints name the permission (see permissions.sql) or the reason behind the
// server errors the collector meets.
var hints = map[int32]string{
	229:   "grant SELECT on the msdb tables (db_datareader in msdb; see permissions.sql)",
	297:   "the login lacks the permission this needs (VIEW SERVER STATE; see permissions.sql)",
	300:   "grant VIEW SERVER STATE (see permissions.sql)",
	262:   "grant the permission named (see permissions.sql)",
	916:   "create a user for the login in msdb (see permissions.sql)",
	15247: "grant VIEW SERVER STATE (see permissions.sql)",
	8189:  "grant VIEW SERVER STATE (see permissions.sql)",
	15003: "reading the error log needs VIEW SERVER STATE (up to 2019) or VIEW ANY ERROR LOG (2022+); see permissions.sql",
	207:   "this build lacks the column; restorewatch gates it by version, please report the build",
	208:   "this build lacks the object; restorewatch gates it by version, please report the build",
	2812:  "the procedure does not exist on this build",
	18456: "check user and password (the server log has the reason by state number)",
	18452: "the server could not accept the Windows login: with Kerberos, the SPN asked for (spn) must be registered to the account SQL Server runs as, " +
		"and the login must exist (CREATE LOGIN [DOMAIN\\name] FROM WINDOWS; see permissions.sql)",
	4060: "the login cannot open the database named",
}

// classify turns a driver error into an *Error for source.
func classify(source string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	out := &Error{Source: source, Kind: KindNetwork, Msg: err.Error()}
	var se mssql.Error
	var pse *mssql.Error
	switch {
	case errors.As(err, &se):
	case errors.As(err, &pse) && pse != nil:
		se = *pse
	case errors.Is(err, context.DeadlineExceeded):
		out.Kind, out.Msg = KindTimeout, "timed out"
		return out
	case errors.Is(err, context.Canceled):
		out.Kind, out.Msg = KindCanceled, "canceled"
		return out
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			out.Kind = KindTimeout
		}
		return out
	}
	out.Number = se.Number
	msg := strings.TrimPrefix(se.Message, "login error: ")
	switch se.Number {
	case 229, 230, 297, 300, 262, 916, 15247, 8189, 15003, 15151:
		out.Kind = KindPermission
	case 207, 208, 2812, 4121:
		out.Kind = KindMissing
	case 18456, 18452, 18470, 18486, 18487, 18488, 4060, 4064:
		out.Kind = KindLogin
	default:
		out.Kind = KindServer
	}
	out.Msg = fmt.Sprintf("%s (error %d)", msg, se.Number)
	if h := hints[se.Number]; h != "" {
		out.Msg += ": " + h
	}
	return out
}
