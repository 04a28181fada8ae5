package tdstest

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// TDS data type identifiers (MS-TDS 2.2.5.4).
const (
	typNull         = 0x1F
	typInt1         = 0x30
	typBit          = 0x32
	typInt2         = 0x34
	typInt4         = 0x38
	typDateTim4     = 0x3A
	typFlt4         = 0x3B
	typMoney        = 0x3C
	typDateTime     = 0x3D
	typFlt8         = 0x3E
	typMoney4       = 0x7A
	typInt8         = 0x7F
	typGUID         = 0x24
	typIntN         = 0x26
	typDateN        = 0x28
	typTimeN        = 0x29
	typDateTime2N   = 0x2A
	typDTOffsetN    = 0x2B
	typBitN         = 0x68
	typDecimalN     = 0x6A
	typNumericN     = 0x6C
	typFltN         = 0x6D
	typMoneyN       = 0x6E
	typDateTimeN    = 0x6F
	typBigVarBin    = 0xA5
	typBigVarChar   = 0xA7
	typBigBinary    = 0xAD
	typBigChar      = 0xAF
	typNVarChar     = 0xE7
	typNChar        = 0xEF
	typXML          = 0xF1
	plpNull         = 0xFFFFFFFFFFFFFFFF
	plpUnknownLen   = 0xFFFFFFFFFFFFFFFE
	maxLenPLP       = 0xFFFF // USHORT max length announcing a (max) type
	colFlagNullable = 0x0001
)

// latin1Collation is SQL_Latin1_General_CP1_CI_AS (LCID 0x0409, flags
// CI/KI/WI, sort id 52): go-mssqldb decodes char/varchar with code page
// 1252 for it, the default collation of most msdb installs.
var latin1Collation = []byte{0x09, 0x04, 0xD0, 0x00, 0x34}

// dt7Scale is the fractional-second scale used for datetime2 and
// datetimeoffset columns, SQL Server's default (100 ns).
const dt7Scale = 7

// declaredSize resolves Column.Size: Max stays Max, zero becomes def, and
// anything above limit must be written as Max.
func declaredSize(c Column, def, limit int) (int, error) {
	switch {
	case c.Size == Max:
		return Max, nil
	case c.Size == 0:
		return def, nil
	case c.Size < 0 || c.Size > limit:
		return 0, fmt.Errorf("size %d out of range 1..%d (use tdstest.Max for (max))", c.Size, limit)
	}
	return c.Size, nil
}

// precision resolves Column.Precision (zero means SQL Server's default 18)
// and checks Scale against it.
func precision(c Column) (uint8, error) {
	p := c.Precision
	if p == 0 {
		p = 18
	}
	if p > 38 || c.Scale > p {
		return 0, fmt.Errorf("numeric(%d,%d) is not a valid type", p, c.Scale)
	}
	return p, nil
}

// appendColMetadata appends a COLMETADATA token. Every column is flagged
// nullable, which is all go-mssqldb looks at (ColumnType.Nullable).
func appendColMetadata(b []byte, cols []Column) ([]byte, error) {
	b = append(b, tokColMetadata)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(cols)))
	for _, c := range cols {
		b = binary.LittleEndian.AppendUint32(b, 0) // UserType
		b = binary.LittleEndian.AppendUint16(b, colFlagNullable)
		var err error
		if b, err = appendTypeInfo(b, c); err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		b = appendBVarChar(b, c.Name)
	}
	return b, nil
}

// appendTypeInfo appends the TYPE_INFO of a column: the nullable (N)
// variant of each fixed type with its byte length, precision/scale,
// USHORT max length plus collation for character types, 0xFFFF for (max).
func appendTypeInfo(b []byte, c Column) ([]byte, error) {
	switch c.Type {
	case TinyInt:
		return append(b, typIntN, 1), nil
	case SmallInt:
		return append(b, typIntN, 2), nil
	case Int:
		return append(b, typIntN, 4), nil
	case BigInt:
		return append(b, typIntN, 8), nil
	case Bit:
		return append(b, typBitN, 1), nil
	case Real:
		return append(b, typFltN, 4), nil
	case Float:
		return append(b, typFltN, 8), nil
	case DateTime:
		return append(b, typDateTimeN, 8), nil
	case DateTime2:
		return append(b, typDateTime2N, dt7Scale), nil
	case DateTimeOffset:
		return append(b, typDTOffsetN, dt7Scale), nil
	case Date:
		return append(b, typDateN), nil
	case UniqueIdentifier:
		return append(b, typGUID, 16), nil
	case Numeric:
		p, err := precision(c)
		if err != nil {
			return nil, err
		}
		return append(b, typNumericN, byte(numericLen(p)), p, c.Scale), nil
	case Char:
		n, err := declaredSize(c, 1, 8000)
		if err != nil || n == Max {
			return nil, fmt.Errorf("char size %d out of range 1..8000", c.Size)
		}
		b = append(b, typBigChar)
		b = binary.LittleEndian.AppendUint16(b, uint16(n))
		return append(b, latin1Collation...), nil
	case VarChar, NVarChar, VarBinary:
		typ, def, limit, unit := byte(typBigVarChar), 8000, 8000, 1
		switch c.Type {
		case NVarChar:
			typ, def, limit, unit = typNVarChar, 4000, 4000, 2
		case VarBinary:
			typ = typBigVarBin
		}
		n, err := declaredSize(c, def, limit)
		if err != nil {
			return nil, err
		}
		b = append(b, typ)
		if n == Max {
			b = binary.LittleEndian.AppendUint16(b, maxLenPLP)
		} else {
			b = binary.LittleEndian.AppendUint16(b, uint16(n*unit))
		}
		if c.Type != VarBinary {
			b = append(b, latin1Collation...)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown column type %d", c.Type)
}

// appendValue appends one ROW value in the column's wire format.
func appendValue(b []byte, c Column, v any) ([]byte, error) {
	if v == nil {
		return appendNull(b, c), nil
	}
	switch c.Type {
	case TinyInt, SmallInt, Int, BigInt:
		return appendInt(b, c.Type, v)
	case Bit:
		bit, ok := v.(bool)
		if i, isInt := toInt64(v); isInt && (i == 0 || i == 1) {
			bit, ok = i == 1, true
		}
		if !ok {
			return nil, fmt.Errorf("bit needs bool, got %T", v)
		}
		if bit {
			return append(b, 1, 1), nil
		}
		return append(b, 1, 0), nil
	case Real, Float:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			i, ok := toInt64(v)
			if !ok {
				return nil, fmt.Errorf("float needs float64, got %T", v)
			}
			f = float64(i)
		}
		if c.Type == Real {
			return binary.LittleEndian.AppendUint32(append(b, 4), math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(append(b, 8), math.Float64bits(f)), nil
	case DateTime, DateTime2, DateTimeOffset, Date:
		t, ok := v.(time.Time)
		if !ok {
			return nil, fmt.Errorf("%s needs time.Time, got %T", typeName(c.Type), v)
		}
		return appendTime(b, c.Type, t)
	case Numeric:
		return appendNumeric(b, c, v)
	case UniqueIdentifier:
		g, err := parseGUID(v)
		if err != nil {
			return nil, err
		}
		w := swapGUID(g)
		return append(append(b, 16), w[:]...), nil
	case Char, VarChar:
		s, ok := stringValue(v)
		if !ok {
			return nil, fmt.Errorf("%s needs string, got %T", typeName(c.Type), v)
		}
		raw, err := encodeCP1252(s)
		if err != nil {
			return nil, err
		}
		def := 8000
		if c.Type == Char {
			def = 1
		}
		n, _ := declaredSize(c, def, 8000)
		if c.Type == Char {
			for len(raw) < n {
				raw = append(raw, ' ') // char(n) is blank-padded
			}
		}
		return appendSized(b, raw, n, 1)
	case NVarChar:
		s, ok := stringValue(v)
		if !ok {
			return nil, fmt.Errorf("nvarchar needs string, got %T", v)
		}
		n, _ := declaredSize(c, 4000, 4000)
		return appendSized(b, appendUCS2(nil, s), n, 2)
	case VarBinary:
		var raw []byte
		switch x := v.(type) {
		case []byte:
			raw = x
		case string:
			raw = []byte(x)
		default:
			return nil, fmt.Errorf("varbinary needs []byte, got %T", v)
		}
		n, _ := declaredSize(c, 8000, 8000)
		return appendSized(b, raw, n, 1)
	}
	return nil, fmt.Errorf("unknown column type %d", c.Type)
}

// appendNull appends the NULL form of the column's type: a zero byte
// length, a 0xFFFF USHORT length, or the PLP NULL marker.
func appendNull(b []byte, c Column) []byte {
	switch c.Type {
	case Char, VarChar, NVarChar, VarBinary:
		if c.Size == Max {
			return binary.LittleEndian.AppendUint64(b, plpNull)
		}
		return binary.LittleEndian.AppendUint16(b, 0xFFFF)
	}
	return append(b, 0)
}
