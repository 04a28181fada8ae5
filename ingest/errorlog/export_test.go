package errorlog

import "io"

// NewUTF16LEReader exposes the decoder to the external tests and benchmarks.
func NewUTF16LEReader(r io.Reader) io.Reader { return newUTF16LEReader(r) }

// BadByte is what the decoder writes for an undecodable code unit.
const BadByte = badByte
