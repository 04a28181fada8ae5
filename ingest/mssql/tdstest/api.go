package tdstest

import (
	"context"
	"crypto/tls"
	"fmt"
)

// Config configures a Server.
type Config struct {
	// User and Password are the SQL login accepted in LOGIN7. Any other
	// credentials get error 18456 and the connection is closed, like SQL
	// Server. If both are empty every login is accepted.
	User, Password string

	// Handler answers every query. A nil Handler answers every query with
	// no result set. The driver's own ping (the batch "select 1;") is
	// answered by the server itself so that the Handler only sees the
	// application's queries; it is still recorded in Queries. So are
	// transaction requests (BeginTx, Commit, Rollback), which the server
	// acknowledges without involving the Handler.
	Handler Handler

	// ServerVersion is reported in PRELOGIN and LOGINACK, e.g.
	// "16.0.4135.4". Empty means "16.0.1000.6" (SQL Server 2022 RTM).
	ServerVersion string

	// Logf, if set, receives one line per connection event and per
	// protocol problem; handy with t.Logf.
	Logf func(format string, args ...any)

	// TLS, when set, holds the server's certificate (see CA.ServerTLS)
	// and lets clients encrypt. Without it the server answers
	// ENCRYPT_NOT_SUP and every login crosses in clear. With it:
	//   - TDS 7.x: PRELOGIN answers encryption as SQL Server does (on when
	//     the client asks, login-only when the client offers ENCRYPT_OFF,
	//     none when the client cannot encrypt) and the TLS handshake runs
	//     inside PRELOGIN packets (TLS 1.2 at most);
	//   - TDS 8 (encrypt=strict): when ServerVersion is 16 (SQL Server
	//     2022) or later, a connection that starts with a TLS ClientHello
	//     gets TLS first, with ALPN "tds/8.0", then PRELOGIN. An older
	//     version closes such a connection, as SQL Server 2019 does.
	// Logins records which of these each login used.
	TLS *tls.Config

	// Kerberos, when set, accepts integrated (SSPI) logins whose
	// Kerberos ticket its keytab verifies; without it every integrated
	// login fails with 18452.
	Kerberos *Kerberos

	// FedAuth, when set, accepts Entra ID logins, both a token sent in
	// LOGIN7 and the ADAL workflows (managed identity, service
	// principal), which the server asks for their token with FEDAUTHINFO;
	// without it they fail with 18456.
	FedAuth FedAuthVerifier

	// TDS8Unanswered makes a server that does not speak TDS 8 leave a
	// TLS ClientHello unanswered until the client gives up, instead of
	// closing the connection: SqlClient meets a timeout there against
	// SQL Server 2019 (github.com/dotnet/SqlClient issue 1905).
	TDS8Unanswered bool
}

// Handler answers one query. The context is cancelled when the client
// sends an attention (its context was cancelled or timed out), when the
// connection closes, or when the Server is closed; a Handler that blocks
// must return when ctx is done, or Close will wait for it.
type Handler interface {
	Handle(ctx context.Context, q Query) ([]ResultSet, error)
}

// HandlerFunc adapts a function to the Handler interface.
type HandlerFunc func(ctx context.Context, q Query) ([]ResultSet, error)

// Handle calls f(ctx, q).
func (f HandlerFunc) Handle(ctx context.Context, q Query) ([]ResultSet, error) {
	return f(ctx, q)
}

// QueryKind tells how a query reached the server.
type QueryKind int

// Query kinds. go-mssqldb sends a query without arguments as a SQL batch,
// a query with arguments as an sp_executesql RPC, and a query text that
// looks like a bare procedure name (no spaces, e.g. "sp_who") as an RPC by
// name.
const (
	KindBatch       QueryKind = iota + 1 // SQL_BATCH packet; SQL is the batch text
	KindExecuteSQL                       // RPC sp_executesql; SQL is the statement
	KindProc                             // RPC by name; SQL is the procedure name
	KindTransaction                      // transaction manager request; SQL is "BEGIN TRANSACTION", "COMMIT TRANSACTION" or "ROLLBACK TRANSACTION"
)

// String returns the kind's name, for test failure messages.
func (k QueryKind) String() string {
	switch k {
	case KindBatch:
		return "batch"
	case KindExecuteSQL:
		return "sp_executesql"
	case KindProc:
		return "proc"
	case KindTransaction:
		return "transaction"
	}
	return fmt.Sprintf("QueryKind(%d)", int(k))
}

// Query is one request received from a client.
type Query struct {
	// SQL is the batch text, the sp_executesql statement text, the
	// procedure name of an RPC by name, or the transaction verb.
	SQL string
	// Params are the decoded RPC parameters, in wire order. For
	// sp_executesql the statement and declaration parameters are not
	// included (see SQL and Decl).
	Params []Param
	// User is the login name and Database the database named in LOGIN7
	// ("master" if none was given).
	User, Database string
	// Kind tells how the query was sent.
	Kind QueryKind
	// Decl is sp_executesql's parameter declaration list as the driver
	// wrote it, e.g. "@p1 bigint,@p2 nvarchar(max)".
	Decl string
}

// Param is one decoded RPC parameter.
type Param struct {
	// Name is the parameter name as sent, with its "@" (go-mssqldb names
	// positional arguments "@p1", "@p2", ...). Procedure calls by name may
	// send unnamed parameters, which have an empty Name.
	Name string
	// Value is nil for NULL, otherwise one of: int64 (tinyint, smallint,
	// int, bigint), bool (bit), float64 (real, float), string (nvarchar,
	// nchar, varchar, char, xml; numeric/decimal and money as decimal text;
	// uniqueidentifier as "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX"), []byte
	// (varbinary, binary) or time.Time (datetime, smalldatetime, date, time
	// and datetime2 in UTC; datetimeoffset in its own offset).
	Value any
	// Output is set for parameters passed with sql.Out. The server does not
	// send output values back.
	Output bool
}

// ResultSet is one result set of a reply.
type ResultSet struct {
	// Columns describes the columns. A ResultSet without columns sends no
	// rows, only a row count (RowsAffected), like an UPDATE.
	Columns []Column
	// Rows holds one []any per row with one value per column; nil is NULL.
	// See ColType for the Go values each column type accepts.
	Rows [][]any
	// RowsAffected is the count reported for a ResultSet without columns.
	RowsAffected int64
}

// Column describes one result column.
type Column struct {
	Name string
	Type ColType
	// Size is the declared length in characters for Char, VarChar and
	// NVarChar and in bytes for VarBinary; Max means (max). Zero means 1
	// for Char, 4000 for NVarChar and 8000 for VarChar and VarBinary.
	Size int
	// Precision and Scale apply to Numeric; zero precision means 18.
	Precision, Scale uint8
}

// Max as Column.Size declares NVARCHAR(MAX), VARCHAR(MAX) or
// VARBINARY(MAX); such values are sent as PLP chunks.
const Max = -1

// ColType is a SQL Server column type for result sets.
type ColType int

// Column types and the Go values they accept (nil is always NULL):
//
//	Int, BigInt, TinyInt, SmallInt  any Go integer type, range-checked
//	Bit                             bool, or an integer 0/1
//	Float, Real                     float64, float32 or an integer
//	DateTime                        time.Time; its wall clock, rounded to 1/300 s like SQL Server
//	DateTime2                       time.Time; its wall clock, scale 7 (100 ns)
//	DateTimeOffset                  time.Time; instant and whole-minute offset, scale 7
//	Date                            time.Time; its wall-clock date
//	Numeric                         any Go integer, *big.Int, big.Int or decimal string ("-12.50")
//	Char, VarChar                   string or []byte; encoded as Windows-1252 (Latin1_General), Char is space-padded
//	NVarChar                        string or []byte (UTF-8)
//	UniqueIdentifier                string "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", [16]byte or 16-byte []byte (RFC 4122 order)
//	VarBinary                       []byte or string
const (
	Int ColType = iota + 1
	BigInt
	TinyInt
	SmallInt
	Bit
	Float
	Real
	DateTime
	DateTime2
	DateTimeOffset
	Date
	Numeric
	Char
	VarChar
	NVarChar
	UniqueIdentifier
	VarBinary
)

// Error is a SQL Server error. Returned by a Handler (as Error or *Error)
// it is sent as an ERROR token followed by a DONE with the error bit, and
// go-mssqldb surfaces it as mssql.Error with the same Number, State, Class
// and Message. Any other error from a Handler is sent as number 50000,
// class 16, state 1 with the error's text.
type Error struct {
	Number       int32
	State, Class uint8
	Message      string
}

// Error formats the error like go-mssqldb does.
func (e Error) Error() string {
	return fmt.Sprintf("mssql: %s (%d)", e.Message, e.Number)
}
