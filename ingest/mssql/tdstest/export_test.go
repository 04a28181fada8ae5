package tdstest

import "io"

// Hooks for the external tests in package tdstest_test: the fuzz targets
// drive the unexported decoders directly, and seed them with messages
// captured from the real driver.

// SetCapture makes s pass every client message (packet type and
// reassembled body) to f. Call it before Start.
func (s *Server) SetCapture(f func(typ byte, body []byte)) { s.capture = f }

// Decoders under fuzz.
var (
	DecodeRPC      = decodeRPC
	DecodeBatch    = decodeBatch
	DecodeTransMgr = decodeTransMgr
	// DecodePrelogin returns a client PRELOGIN's options by token.
	DecodePrelogin = decodePrelogin
)

// Message is a reassembled client message.
type Message struct {
	Type byte
	Body []byte
}

// ReadMessage reads one message with the server's packet reassembly.
func ReadMessage(r io.Reader) (Message, error) {
	m, err := readMessage(r)
	return Message{m.typ, m.body}, err
}

// DecodeLogin7 returns the user, password and database of a LOGIN7 body.
func DecodeLogin7(b []byte) (user, password, database string, err error) {
	l, err := decodeLogin7(b)
	return l.User, l.Password, l.Database, err
}

// Packet types, for picking captured messages.
const (
	PktBatch    = pktBatch
	PktRPC      = pktRPC
	PktTransMgr = pktTransMgr
	PktLogin7   = pktLogin7
	PktPrelogin = pktPrelogin
)
