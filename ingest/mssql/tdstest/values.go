package tdstest

// Encoders for single ROW values, used by appendValue in types.go.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"
)

// appendSized appends a character or binary value whose column was
// declared with n units of unit bytes each (n == Max: PLP).
func appendSized(b, raw []byte, n, unit int) ([]byte, error) {
	if n == Max {
		// PLP: total length, chunks with a UINT length, a zero terminator.
		b = binary.LittleEndian.AppendUint64(b, uint64(len(raw)))
		for len(raw) > 0 {
			k := min(len(raw), 8000)
			b = binary.LittleEndian.AppendUint32(b, uint32(k))
			b = append(b, raw[:k]...)
			raw = raw[k:]
		}
		return binary.LittleEndian.AppendUint32(b, 0), nil
	}
	if len(raw) > n*unit {
		return nil, fmt.Errorf("value of %d bytes does not fit the declared length %d (%d bytes)", len(raw), n, n*unit)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(raw)))
	return append(b, raw...), nil
}

// stringValue accepts the Go values allowed for character columns.
func stringValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

// appendInt appends an INTN value after checking the column type's range.
func appendInt(b []byte, t ColType, v any) ([]byte, error) {
	i, ok := toInt64(v)
	if !ok {
		return nil, fmt.Errorf("%s needs an integer, got %T", typeName(t), v)
	}
	var lo, hi int64
	switch t {
	case TinyInt:
		lo, hi = 0, math.MaxUint8
	case SmallInt:
		lo, hi = math.MinInt16, math.MaxInt16
	case Int:
		lo, hi = math.MinInt32, math.MaxInt32
	default:
		lo, hi = math.MinInt64, math.MaxInt64
	}
	if i < lo || i > hi {
		return nil, fmt.Errorf("%d out of range for %s", i, typeName(t))
	}
	switch t {
	case TinyInt:
		return append(b, 1, byte(i)), nil
	case SmallInt:
		return binary.LittleEndian.AppendUint16(append(b, 2), uint16(i)), nil
	case Int:
		return binary.LittleEndian.AppendUint32(append(b, 4), uint32(i)), nil
	}
	return binary.LittleEndian.AppendUint64(append(b, 8), uint64(i)), nil
}

// appendTime appends datetime, date, datetime2(7) and datetimeoffset(7)
// values. datetimeoffset stores the UTC instant and the offset separately,
// so t's wall clock is only used for the others.
func appendTime(b []byte, typ ColType, t time.Time) ([]byte, error) {
	switch typ {
	case DateTime:
		days, ticks, err := encodeDateTime(t)
		if err != nil {
			return nil, err
		}
		b = binary.LittleEndian.AppendUint32(append(b, 8), uint32(days))
		return binary.LittleEndian.AppendUint32(b, ticks), nil
	case Date:
		if t.Year() < 1 || civilDays(t) > maxDays {
			return nil, fmt.Errorf("%v is outside date's range", t)
		}
		d := civilDays(t)
		return append(b, 3, byte(d), byte(d>>8), byte(d>>16)), nil
	}
	var offMin int
	if typ == DateTimeOffset {
		_, off := t.Zone()
		if off%60 != 0 {
			return nil, fmt.Errorf("offset of %v is not a whole number of minutes", t)
		}
		offMin = off / 60
		t = t.UTC() // datetimeoffset carries the UTC instant plus the offset
	}
	days, units, err := encodeDateTime2(t)
	if err != nil {
		return nil, err
	}
	n := byte(8)
	if typ == DateTimeOffset {
		n = 10
	}
	b = append(b, n, byte(units), byte(units>>8), byte(units>>16), byte(units>>24), byte(units>>32))
	b = append(b, byte(days), byte(days>>8), byte(days>>16))
	if typ == DateTimeOffset {
		b = binary.LittleEndian.AppendUint16(b, uint16(int16(offMin)))
	}
	return b, nil
}

// appendNumeric appends a NUMERICN value: length, sign byte (1 = positive)
// and the little-endian magnitude padded to the precision's width.
func appendNumeric(b []byte, c Column, v any) ([]byte, error) {
	p, err := precision(c)
	if err != nil {
		return nil, err
	}
	n, err := parseNumeric(v, c.Scale)
	if err != nil {
		return nil, err
	}
	mag := new(big.Int).Abs(n)
	if mag.Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)) >= 0 {
		return nil, fmt.Errorf("%v does not fit numeric(%d,%d)", v, p, c.Scale)
	}
	width := numericLen(p)
	sign := byte(1)
	if n.Sign() < 0 {
		sign = 0
	}
	b = append(b, byte(width), sign)
	be := mag.FillBytes(make([]byte, width-1))
	for i := len(be) - 1; i >= 0; i-- {
		b = append(b, be[i])
	}
	return b, nil
}

// typeName is the SQL name of a column type, for error messages.
func typeName(t ColType) string {
	names := map[ColType]string{Int: "int", BigInt: "bigint", TinyInt: "tinyint",
		SmallInt: "smallint", Bit: "bit", Float: "float", Real: "real",
		DateTime: "datetime", DateTime2: "datetime2", DateTimeOffset: "datetimeoffset",
		Date: "date", Numeric: "numeric", Char: "char", VarChar: "varchar",
		NVarChar: "nvarchar", UniqueIdentifier: "uniqueidentifier", VarBinary: "varbinary"}
	if s, ok := names[t]; ok {
		return s
	}
	return fmt.Sprintf("ColType(%d)", int(t))
}
