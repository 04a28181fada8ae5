package errorlog

import "io"

// NewUTF16LEReader exposes the decoder to the external tests and benchmarks.
func NewUTF16LEReader(r io.Reader) io.Reader { return newUTF16LEReader(r) }

// NewMixedReader exposes the mixed-encoding decoder (starting in UTF-8 when
// utf8 is set, else in UTF-16LE after its byte-order mark) to the tests.
func NewMixedReader(r io.Reader, utf8 bool) io.Reader {
	if !utf8 {
		_, _ = io.ReadFull(r, make([]byte, 2))
	}
	return newMixedReader(r, utf8)
}

// BadByte is what the decoder writes for an undecodable code unit.
const BadByte = badByte
