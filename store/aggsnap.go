package store

import "time"

// Aggregate is a dashboard aggregate kept in the warehouse between runs of
// the server (migration 0030): its encoded value, the version it was
// computed at (the server's own text) and how long computing it took.
type Aggregate struct {
	Name, Version string
	Took          time.Duration
	Body          []byte
}
