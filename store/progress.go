package store

// Progress is how far a long warehouse operation has come: the phase it is
// in ("deriving restores", "building indexes", "analysing"), how many of its
// steps are done, out of how many.
type Progress struct {
	Phase       string
	Done, Total int
}

// Phases of Progress.
const (
	PhaseDerive    = "deriving restores"
	PhaseIndexes   = "building indexes"
	PhaseAnalysing = "analysing"
)
