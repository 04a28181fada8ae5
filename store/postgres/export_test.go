package postgres

// MonthOf is monthOf, for TestMonthOfAsInSQL.
var MonthOf = monthOf
