package locale

// englishTexts are the engine's English texts (reference
// sqlserver-formats.md §2.4, from Microsoft's "Database engine events and
// errors" pages), so that English input is recognised as itself.
var englishTexts = []text{
	{3014, English, "{stmt} successfully processed {pages} pages in {secs} seconds ({rate} MB/sec).", srcDocsEN3000},
	{4035, English, "Processed {pages} pages for database '{db}', file '{file}' on file {fileno}.", srcDocsEN4000},
	{3211, English, "{pct} percent processed.", srcDocsEN3000},
	{3013, English, "{stmt} is terminating abnormally.", srcDocsEN3000},
	{18264, English, english[18264], srcDocsEN18000},
	{18265, English, english[18265], srcDocsEN18000},
	{18267, English, english[18267], srcDocsEN18000},
	{18268, English, english[18268], srcDocsEN18000},
	{18269, English, english[18269], srcDocsEN18000},
	{18271, English, english[18271], srcDocsEN18000},
	{18277, English, english[18277], srcDocsEN18000},
}

const (
	srcDocsEN3000  = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-3000-to-3999"
	srcDocsEN4000  = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-4000-to-4999"
	srcDocsEN18000 = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-18000-to-18999"
)
