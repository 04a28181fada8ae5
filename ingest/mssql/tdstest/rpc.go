package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"
	"unicode/utf8"
)

// procExecuteSQL is sp_executesql's well-known ProcID, which go-mssqldb
// sends instead of the name for every query with arguments.
const procExecuteSQL = 10

// Parameter status flags.
const paramByRef = 0x01 // output parameter

// decodeBatch decodes a SQL_BATCH: ALL_HEADERS, then UTF-16LE text.
func decodeBatch(b []byte) (string, error) {
	r := &rd{b: b}
	r.skipAllHeaders()
	if r.err != nil {
		return "", r.err
	}
	if r.left()%2 != 0 {
		return "", errors.New("tds: SQL batch text has an odd number of bytes")
	}
	return fromUCS2(r.bytes(r.left())), nil
}

// decodeRPC decodes an RPC request (MS-TDS 2.2.6.6) into a Query: the
// procedure (by ProcID or name), option flags and the parameters. For
// sp_executesql the first two parameters, statement and declarations,
// become Query.SQL and Query.Decl.
func decodeRPC(b []byte) (Query, error) {
	var q Query
	r := &rd{b: b}
	r.skipAllHeaders()
	nameLen := r.u16()
	procID := uint16(0)
	if nameLen == 0xFFFF {
		procID = r.u16()
	} else {
		q.SQL = r.ucs2(int(nameLen))
	}
	r.u16() // option flags: WithRecomp, NoMetaData, ReuseMetaData; nothing to do
	if r.err != nil {
		return q, r.err
	}
	for r.left() > 0 {
		if c := r.b[r.off]; c == 0xFF || c == 0xFE {
			// BatchFlag/NoExecFlag: several RPCs in one request. A
			// parameter name cannot start with these lengths (names are
			// at most 128 characters), so this is unambiguous.
			return q, errors.New("tdstest: batched RPC requests are not supported")
		}
		var p Param
		p.Name = r.bVarChar()
		status := r.u8()
		p.Output = status&paramByRef != 0
		v, err := decodeTypedValue(r)
		if err != nil {
			return q, fmt.Errorf("parameter %d %q: %w", len(q.Params)+1, p.Name, err)
		}
		p.Value = v
		q.Params = append(q.Params, p)
	}
	switch {
	case nameLen != 0xFFFF:
		q.Kind = KindProc
	case procID == procExecuteSQL:
		q.Kind = KindExecuteSQL
		if len(q.Params) == 0 {
			return q, errors.New("tdstest: sp_executesql without a statement")
		}
		stmt, ok := q.Params[0].Value.(string)
		if !ok {
			return q, fmt.Errorf("tdstest: sp_executesql statement is %T, not a string", q.Params[0].Value)
		}
		q.SQL = stmt
		if len(q.Params) > 1 {
			q.Decl, _ = q.Params[1].Value.(string)
			q.Params = q.Params[2:]
		} else {
			q.Params = nil
		}
	default:
		return q, fmt.Errorf("tdstest: RPC ProcID %d is not supported (only sp_executesql, 10)", procID)
	}
	return q, nil
}

// decodeTypedValue reads one TYPE_INFO and the value that follows it.
func decodeTypedValue(r *rd) (any, error) {
	typ := r.u8()
	if r.err != nil {
		return nil, r.err
	}
	v, err := decodeByType(r, typ)
	if err == nil {
		err = r.err
	}
	return v, err
}

func decodeByType(r *rd, typ byte) (any, error) {
	switch typ {
	case typNull:
		return nil, nil
	case typInt1, typBit, typInt2, typInt4, typInt8, typFlt4, typFlt8,
		typDateTim4, typDateTime, typMoney4, typMoney:
		n := map[byte]int{typInt1: 1, typBit: 1, typInt2: 2, typInt4: 4, typInt8: 8,
			typFlt4: 4, typFlt8: 8, typDateTim4: 4, typDateTime: 8, typMoney4: 4, typMoney: 8}[typ]
		return decodeFixed(typ, r.bytes(n))
	case typIntN, typBitN, typFltN, typMoneyN, typDateTimeN, typGUID:
		r.u8() // max length; the value carries its own
		return decodeByteLen(r, typ, 0, 0)
	case typDecimalN, typNumericN:
		r.u8()
		prec, scale := r.u8(), r.u8()
		if r.err == nil && (prec == 0 || prec > 38 || scale > prec) {
			return nil, fmt.Errorf("bad decimal(%d,%d)", prec, scale)
		}
		return decodeByteLen(r, typ, prec, scale)
	case typDateN:
		return decodeByteLen(r, typ, 0, 0)
	case typTimeN, typDateTime2N, typDTOffsetN:
		scale := r.u8()
		if scale > 7 {
			return nil, fmt.Errorf("bad time scale %d", scale)
		}
		return decodeByteLen(r, typ, 0, scale)
	case typBigVarBin, typBigBinary, typBigVarChar, typBigChar, typNVarChar, typNChar:
		maxLen := r.u16()
		var coll []byte
		if typ != typBigVarBin && typ != typBigBinary {
			coll = r.bytes(5)
		}
		var raw []byte
		var null bool
		if maxLen == maxLenPLP {
			raw, null = readPLP(r)
		} else {
			n := r.u16()
			null = n == 0xFFFF
			if !null {
				raw = r.bytes(int(n))
			}
		}
		if r.err != nil || null {
			return nil, r.err
		}
		return decodeChars(typ, coll, raw)
	case typXML:
		if r.u8() != 0 { // schema present
			r.bVarChar()
			r.bVarChar()
			r.usVarChar()
		}
		raw, null := readPLP(r)
		if r.err != nil || null {
			return nil, r.err
		}
		return decodeChars(typNVarChar, nil, raw)
	}
	return nil, fmt.Errorf("parameter type %#x is not supported", typ)
}

// readPLP reads a PLP value: a ULONGLONG total length (or the NULL or
// unknown-length markers), then chunks with a ULONG length up to a zero
// terminator. go-mssqldb sends strings longer than 4000 characters, and
// empty ones, this way, always with the unknown-length marker.
func readPLP(r *rd) (raw []byte, null bool) {
	total := r.u64()
	if r.err != nil || total == plpNull {
		return nil, r.err == nil
	}
	raw = []byte{}
	for r.err == nil {
		n := r.u32()
		if n == 0 {
			break
		}
		raw = append(raw, r.bytes(int(n))...)
	}
	if r.err == nil && total != plpUnknownLen && total != uint64(len(raw)) {
		r.fail(fmt.Errorf("PLP length %d but chunks hold %d bytes", total, len(raw)))
	}
	return raw, false
}

// decodeByteLen reads a BYTELEN value (a length byte, 0 = NULL) of the
// nullable types.
func decodeByteLen(r *rd, typ, prec, scale byte) (any, error) {
	n := int(r.u8())
	b := r.bytes(n)
	if r.err != nil || n == 0 {
		return nil, r.err
	}
	bad := func() (any, error) { return nil, fmt.Errorf("bad length %d for type %#x", n, typ) }
	switch typ {
	case typIntN:
		fixed := map[int]byte{1: typInt1, 2: typInt2, 4: typInt4, 8: typInt8}[n]
		if fixed == 0 {
			return bad()
		}
		return decodeFixed(fixed, b)
	case typBitN:
		if n != 1 {
			return bad()
		}
		return b[0] != 0, nil
	case typFltN, typMoneyN, typDateTimeN:
		if n != 4 && n != 8 {
			return bad()
		}
		fixed := map[byte][2]byte{typFltN: {typFlt4, typFlt8}, typMoneyN: {typMoney4, typMoney},
			typDateTimeN: {typDateTim4, typDateTime}}[typ][n/8]
		return decodeFixed(fixed, b)
	case typGUID:
		if n != 16 {
			return bad()
		}
		return guidString(b), nil
	case typDecimalN, typNumericN:
		if n < 2 || n > 17 {
			return bad()
		}
		mag := make([]byte, n-1) // little-endian on the wire
		for i := range mag {
			mag[i] = b[n-1-i]
		}
		return formatNumeric(new(big.Int).SetBytes(mag), b[0] == 0, scale), nil
	case typDateN:
		if n != 3 {
			return bad()
		}
		d, ok := decodeDays(b)
		if !ok {
			return nil, errors.New("date out of range")
		}
		return d, nil
	}
	// time, datetime2, datetimeoffset: time part, then date, then offset.
	tb := timeBytes(scale)
	want := map[byte]int{typTimeN: tb, typDateTime2N: tb + 3, typDTOffsetN: tb + 5}[typ]
	if n != want {
		return bad()
	}
	tod, ok := decodeTimeUnits(b[:tb], scale)
	if !ok {
		return nil, errors.New("time of day out of range")
	}
	if typ == typTimeN {
		return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(tod), nil
	}
	d, ok := decodeDays(b[tb : tb+3])
	if !ok {
		return nil, errors.New("date out of range")
	}
	t := d.Add(tod)
	if typ == typDTOffsetN {
		off := int(int16(binary.LittleEndian.Uint16(b[tb+3:])))
		t = t.In(time.FixedZone("", off*60))
	}
	return t, nil
}

// decodeFixed decodes the fixed-length types, also used for the values of
// their nullable variants.
func decodeFixed(typ byte, b []byte) (any, error) {
	if b == nil {
		return nil, errShort
	}
	switch typ {
	case typInt1:
		return int64(b[0]), nil // tinyint is unsigned
	case typBit:
		return b[0] != 0, nil
	case typInt2:
		return int64(int16(binary.LittleEndian.Uint16(b))), nil
	case typInt4:
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	case typInt8:
		return int64(binary.LittleEndian.Uint64(b)), nil
	case typFlt4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
	case typFlt8:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case typDateTim4:
		days, mins := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:])
		return time.Date(1900, 1, 1+int(days), 0, int(mins), 0, 0, time.UTC), nil
	case typDateTime:
		ticks := binary.LittleEndian.Uint32(b[4:])
		if ticks >= ticksPerDay {
			return nil, fmt.Errorf("datetime tick count %d exceeds a day", ticks)
		}
		return decodeDateTime(int32(binary.LittleEndian.Uint32(b)), ticks), nil
	case typMoney4:
		v := int64(int32(binary.LittleEndian.Uint32(b)))
		return formatNumeric(new(big.Int).Abs(big.NewInt(v)), v < 0, 4), nil
	case typMoney:
		// money is two little-endian halves, the high 32 bits first.
		v := int64(uint64(binary.LittleEndian.Uint32(b))<<32 | uint64(binary.LittleEndian.Uint32(b[4:])))
		return formatNumeric(new(big.Int).Abs(big.NewInt(v)), v < 0, 4), nil
	}
	return nil, fmt.Errorf("type %#x is not fixed-length", typ)
}

// decodeChars decodes character and binary values. go-mssqldb sends
// mssql.VarChar as raw UTF-8 with an all-zero collation, so such bytes
// are kept as UTF-8; with a real collation they are read as code page 1252.
func decodeChars(typ byte, coll, raw []byte) (any, error) {
	switch typ {
	case typBigVarBin, typBigBinary:
		return raw, nil
	case typNVarChar, typNChar:
		if len(raw)%2 != 0 {
			return nil, errors.New("UTF-16 value has an odd number of bytes")
		}
		return fromUCS2(raw), nil
	}
	if isZero(coll) && utf8.Valid(raw) {
		return string(raw), nil
	}
	return decodeCP1252(raw), nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Transaction manager request types (MS-TDS 2.2.6.9).
const (
	tmBegin    = 5
	tmCommit   = 7
	tmRollback = 8
)

// decodeTransMgr decodes the requests go-mssqldb sends for BeginTx,
// Commit and Rollback. The isolation level and names are read for
// validation only: the server has no data to isolate.
func decodeTransMgr(b []byte) (uint16, error) {
	r := &rd{b: b}
	r.skipAllHeaders()
	typ := r.u16()
	switch typ {
	case tmBegin:
		r.u8()       // isolation level
		r.bVarChar() // transaction name
	case tmCommit, tmRollback:
		r.bVarChar() // transaction name
		if r.u8()&1 != 0 && r.err == nil {
			// fBeginXact chains a new transaction; go-mssqldb never sets it.
			return typ, errors.New("tdstest: chained transactions are not supported")
		}
	default:
		if r.err == nil {
			return typ, fmt.Errorf("tdstest: transaction manager request %d is not supported", typ)
		}
	}
	return typ, r.err
}
