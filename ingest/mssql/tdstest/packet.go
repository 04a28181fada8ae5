package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
)

// TDS packet types (MS-TDS 2.2.3.1.1).
const (
	pktBatch     = 0x01
	pktRPC       = 0x03
	pktReply     = 0x04
	pktAttention = 0x06
	pktTransMgr  = 0x0E
	pktLogin7    = 0x10
	pktPrelogin  = 0x12
)

const (
	headerLen = 8
	statusEOM = 0x01 // last packet of a message
	// maxMessage bounds the reassembled size of one client message so a
	// broken client (or the fuzzer) cannot make the server allocate without
	// limit. The largest thing tests send is a few nvarchar(max) values.
	maxMessage = 16 << 20
)

// message is one reassembled client message: the payload of all its packets.
type message struct {
	typ  byte
	body []byte
}

// readMessage reads packets until one carries EOM. The status byte's other
// bits (0x08 reset connection, 0x10 reset keeping transaction) are ignored
// because the server keeps no session state worth resetting.
func readMessage(r io.Reader) (message, error) {
	var m message
	var hdr [headerLen]byte
	for first := true; ; first = false {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if !first && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return m, err
		}
		size := int(binary.BigEndian.Uint16(hdr[2:4]))
		if size < headerLen {
			return m, fmt.Errorf("tds: packet length %d shorter than header", size)
		}
		if first {
			m.typ = hdr[0]
		} else if hdr[0] != m.typ {
			return m, fmt.Errorf("tds: packet type changed from %#x to %#x inside a message", m.typ, hdr[0])
		}
		if len(m.body)+size-headerLen > maxMessage {
			return m, fmt.Errorf("tds: message longer than %d bytes", maxMessage)
		}
		start := len(m.body)
		m.body = append(m.body, make([]byte, size-headerLen)...)
		if _, err := io.ReadFull(r, m.body[start:]); err != nil {
			return m, fmt.Errorf("tds: short packet: %w", err)
		}
		if hdr[1]&statusEOM != 0 {
			return m, nil
		}
	}
}

// writeMessage splits body into packets no longer than packetSize (the size
// the client asked for in LOGIN7: go-mssqldb rejects longer packets) and
// writes them in one Write so a reply is never interleaved.
func writeMessage(w io.Writer, typ byte, body []byte, packetSize int, spid uint16) error {
	chunk := packetSize - headerLen
	out := make([]byte, 0, len(body)+headerLen*(len(body)/chunk+1))
	id := byte(1)
	for {
		n := min(len(body), chunk)
		status := byte(0)
		if n == len(body) {
			status = statusEOM
		}
		out = append(out, typ, status)
		out = binary.BigEndian.AppendUint16(out, uint16(n+headerLen))
		out = binary.BigEndian.AppendUint16(out, spid)
		out = append(out, id, 0)
		out = append(out, body[:n]...)
		body = body[n:]
		id++ // wraps at 256 as the spec allows
		if status == statusEOM {
			break
		}
	}
	_, err := w.Write(out)
	return err
}

// errShort is what every decoder reports when the input ends early.
var errShort = errors.New("tds: message truncated")

// rd reads little-endian TDS fields from a byte slice. The first error
// sticks and later reads return zero values, so decoders can read a whole
// structure and check r.err once; no input can make it panic.
type rd struct {
	b   []byte
	off int
	err error
}

func (r *rd) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *rd) left() int { return len(r.b) - r.off }

func (r *rd) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.left() {
		r.fail(errShort)
		return nil
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v
}

func (r *rd) u8() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *rd) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *rd) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *rd) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// ucs2 reads n UTF-16 code units.
func (r *rd) ucs2(n int) string {
	return fromUCS2(r.bytes(2 * n))
}

// bVarChar reads a B_VARCHAR: a byte count of UTF-16 units, then the units.
func (r *rd) bVarChar() string { return r.ucs2(int(r.u8())) }

// usVarChar reads a US_VARCHAR: a uint16 count of UTF-16 units.
func (r *rd) usVarChar() string { return r.ucs2(int(r.u16())) }

// skipAllHeaders skips the ALL_HEADERS block that TDS 7.2+ puts in front
// of SQL_BATCH, RPC and transaction manager requests. Its first DWORD is
// its own total length; the headers inside (transaction descriptor, query
// notification, trace activity) carry nothing this server needs.
func (r *rd) skipAllHeaders() {
	total := int(r.u32())
	if r.err == nil && total < 4 {
		r.fail(fmt.Errorf("tds: ALL_HEADERS length %d", total))
	}
	r.bytes(total - 4)
}

// fromUCS2 decodes UTF-16LE; a trailing odd byte is dropped (callers that
// care check the length first).
func fromUCS2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// appendUCS2 appends s as UTF-16LE.
func appendUCS2(b []byte, s string) []byte {
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// appendBVarChar appends a B_VARCHAR; callers pass short names only, and a
// longer string is cut at 255 units rather than corrupting the stream.
func appendBVarChar(b []byte, s string) []byte {
	u := utf16.Encode([]rune(s))
	if len(u) > 255 {
		u = u[:255]
	}
	b = append(b, byte(len(u)))
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return b
}

// appendUSVarChar appends a US_VARCHAR, cut at 65535 units.
func appendUSVarChar(b []byte, s string) []byte {
	u := utf16.Encode([]rune(s))
	if len(u) > 0xFFFF {
		u = u[:0xFFFF]
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(u)))
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return b
}
