package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DONE status bits (MS-TDS 2.2.7.6).
const (
	doneFinal = 0x00
	doneMore  = 0x01 // more results follow in this reply
	doneError = 0x02 // the statement failed
	doneCount = 0x10 // RowCount is valid
	doneAttn  = 0x20 // acknowledges an attention (cancel)
)

// CurCmd values SQL Server puts in DONE; go-mssqldb only distinguishes
// SELECT from the rest.
const (
	cmdSelect = 0xC1
	cmdUpdate = 0xC5
)

// appendDone appends a DONE-family token with TDS 7.2+'s 8-byte row count.
func appendDone(b []byte, tok byte, status, curCmd uint16, rows uint64) []byte {
	b = append(b, tok)
	b = binary.LittleEndian.AppendUint16(b, status)
	b = binary.LittleEndian.AppendUint16(b, curCmd)
	return binary.LittleEndian.AppendUint64(b, rows)
}

// appendError appends an ERROR token. The server name is what SQL Server
// would put there (@@SERVERNAME); tests only see it in mssql.Error.
func appendError(b []byte, e Error) []byte {
	var body []byte
	body = binary.LittleEndian.AppendUint32(body, uint32(e.Number))
	body = append(body, e.State, e.Class)
	body = appendUSVarChar(body, e.Message)
	body = appendBVarChar(body, "tdstest")
	body = appendBVarChar(body, "") // procedure name
	body = binary.LittleEndian.AppendUint32(body, 1)
	b = append(b, tokError)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

// toError turns a Handler's error into the SQL Server error to send.
// Zero Class and State get SQL Server's usual 16 and 1 so that a
// Handler can write Error{Number: 208, Message: ...} and nothing more.
func toError(err error) Error {
	var e Error
	var pe *Error
	switch {
	case errors.As(err, &pe) && pe != nil:
		e = *pe
	case errors.As(err, &e):
	default:
		e = Error{Number: 50000, Message: err.Error()}
	}
	if e.Class == 0 {
		e.Class = 16
	}
	if e.State == 0 {
		e.State = 1
	}
	return e
}

// errorReply is a complete reply for a failed request.
func errorReply(e Error) []byte {
	return appendDone(appendError(nil, toError(e)), tokDone, doneError, 0, 0)
}

// buildReply encodes a Handler's answer: per result set COLMETADATA, the
// ROWs and a DONE with the row count, DONE_MORE on all but the last DONE so
// that rows.NextResultSet works; a Handler error follows the result sets as
// ERROR plus DONE with the error bit. It fails, before anything is sent,
// if a value does not fit its column, so a mistake in a test's canned data
// surfaces as a clear error rather than a corrupt stream.
func buildReply(sets []ResultSet, herr error) ([]byte, error) {
	var b []byte
	for i, rs := range sets {
		status := uint16(doneCount)
		if i < len(sets)-1 || herr != nil {
			status |= doneMore
		}
		if len(rs.Columns) == 0 {
			if len(rs.Rows) > 0 {
				return nil, fmt.Errorf("tdstest: result set %d has rows but no columns", i)
			}
			b = appendDone(b, tokDone, status, cmdUpdate, uint64(rs.RowsAffected))
			continue
		}
		var err error
		if b, err = appendColMetadata(b, rs.Columns); err != nil {
			return nil, fmt.Errorf("tdstest: result set %d: %w", i, err)
		}
		for r, row := range rs.Rows {
			if len(row) != len(rs.Columns) {
				return nil, fmt.Errorf("tdstest: result set %d row %d has %d values for %d columns", i, r, len(row), len(rs.Columns))
			}
			b = append(b, tokRow)
			for c, v := range row {
				if b, err = appendValue(b, rs.Columns[c], v); err != nil {
					return nil, fmt.Errorf("tdstest: result set %d row %d column %q: %w", i, r, rs.Columns[c].Name, err)
				}
			}
		}
		b = appendDone(b, tokDone, status, cmdSelect, uint64(len(rs.Rows)))
	}
	if herr != nil {
		b = appendError(b, toError(herr))
		b = appendDone(b, tokDone, doneError, 0, 0)
	}
	if len(sets) == 0 && herr == nil {
		b = appendDone(b, tokDone, doneFinal, 0, 0)
	}
	return b, nil
}

// pingReply answers go-mssqldb's Ping batch "select 1;" with what SQL
// Server returns: one unnamed int column and one row.
func pingReply() []byte {
	b, _ := buildReply([]ResultSet{{Columns: []Column{{Type: Int}}, Rows: [][]any{{1}}}}, nil)
	return b
}
