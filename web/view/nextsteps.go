package view

// NextStep is one fact to gather when no recorded factor explains a
// regression (analysis.NextStep).
type NextStep struct {
	Name, Missing, Why, Where, Kind, Command string
}
