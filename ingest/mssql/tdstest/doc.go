// Package tdstest is a small in-process TDS 7.4 server that the real
// github.com/microsoft/go-mssqldb driver can connect to over TCP on
// 127.0.0.1. It exists so the live collector can be tested end to end
// without a SQL Server instance.
//
// The server speaks just enough of MS-TDS for go-mssqldb with SQL
// authentication: PRELOGIN, LOGIN7 with a user and password check,
// SQL_BATCH, RPC (sp_executesql and procedures called by name), transaction
// manager requests (BeginTx/Commit/Rollback, without any real isolation)
// and attention (cancellation). Every query is handed to a Handler, which
// returns canned result sets or an Error.
//
// Encryption: without Config.TLS the server answers ENCRYPTION=NOT_SUP and
// nothing is encrypted. With a certificate (made at test time by NewCA and
// CA.ServerTLS, never committed) it serves the three ways go-mssqldb
// encrypts: TDS 7.x TLS negotiated in PRELOGIN with the handshake carried
// inside PRELOGIN packets (encrypt=true, and login-only for
// encrypt=false), and TDS 8 (encrypt=strict: TLS with ALPN "tds/8.0" from
// the first byte) when ServerVersion is 16 or later. Logins tells how each
// LOGIN7 arrived.
//
// What a test against this server proves:
//   - the driver connects, logs in and keeps pooled connections usable;
//   - query text and parameters arrive exactly as the application sent them
//     (parameter binding: types, NULLs, long and empty strings);
//   - result sets in the msdb column types (int, bigint, tinyint, smallint,
//     bit, float, real, datetime, datetime2, datetimeoffset, date,
//     numeric(p,s), char, varchar, nvarchar, nvarchar(max), uniqueidentifier,
//     varbinary) are decoded and scanned by the application as they would be
//     from SQL Server, including NULLs, datetime 1/300 s rounding and
//     numeric(25,0) values beyond int64;
//   - errors, timeouts, hung servers and dropped connections are handled.
//
// What it cannot prove:
//   - that the T-SQL is valid, or that it returns those rows on a real SQL
//     Server: the server never parses SQL, the Handler decides the answer.
//     Keep the application's queries few and fixed, and check them against
//     the msdb schema documentation (or a real instance) separately;
//   - SQL Server's exact column metadata (nullability, lengths) unless the
//     Handler reproduces it;
//   - SQL Server's own TLS stack (cipher suites, TLS 1.3 in TDS 7.x, "Force
//     Encryption" and "Force Strict Encryption"), Windows/Azure AD logins, MARS, bulk copy,
//     output parameters and return values, table-valued parameters, or
//     sql_variant/text/ntext/image/xml results. Those are not implemented.
package tdstest
