package locale

// Where each localized text was found. A "public GitHub file" is named by the
// id the code-search index gave it (its repository was not shown), with what
// it is; testdata/realworld/localized/README.md quotes the lines themselves.
const (
	srcDocsEN3000  = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-3000-to-3999"
	srcDocsEN4000  = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-4000-to-4999"
	srcDocsEN18000 = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-18000-to-18999"

	// Catalogue pages of SQL Server 2008 in the installation's language
	// (the sys.messages templates, %hs/%I64d placeholders).
	srcDocsJA3000 = "https://learn.microsoft.com/ja-jp/previous-versions/sql/sql-server-2008/cc645601(v=sql.100)"
	srcDocsKO3000 = "https://learn.microsoft.com/ko-kr/previous-versions/sql/sql-server-2008/cc645601(v=sql.100)"

	// Real output posted publicly.
	srcJaRestore  = "public GitHub file (find_string id 8577867895): Japanese SSMS Messages tab of a RESTORE DATABASE, 2022-12-17"
	srcJaContoso  = "public GitHub file (find_string id 38961961894): Japanese sqlcmd output of RESTORE DATABASE Contoso on Linux"
	srcGosmo3211  = "public GitHub file (find_string id 68877700995): Go test of a SQL Server client quoting message 3211 as the server prints it for non-English logins"
	srcEsBeerCap  = "beetlebum97/BeerCap README.md (find_string id 67476222859): Spanish sqlcmd output of BACKUP and RESTORE DATABASE with STATS"
	srcEsCamping  = "public GitHub file (find_string id 15534168046): Spanish SSMS Messages tab of BACKUP DATABASE, 2023-12-05"
	srcRuAgentLab = "public GitHub file (find_string id 19613015981): Russian SQL Agent job step output of BACKUP ... WITH DIFFERENTIAL and RESTORE DATABASE, 2024-12-15"
	srcRuUserAct  = "public GitHub file (find_string id 57016194526): Russian RESTORE DATABASE output quoted in a script comment"
	srcRu3013     = "public GitHub file (find_string id 59182694078): Russian SSMS error output 'Сообщение 3013, уровень 16 ...'"
	srcZhMediaSet = "public GitHub file (find_string id 12420753591): Simplified Chinese T-SQL media-set demo quoting the messages of RESTORE and BACKUP DATABASE"
	srcZh3013Log  = "public GitHub file (find_string id 312066445): Simplified Chinese SSMS error output '消息 3013，级别 16 ...' of RESTORE LOG"
	srcZh3013TDE  = "public GitHub file (find_string id 10025173729): Simplified Chinese SSMS error output of RESTORE DATABASE (TDE certificate missing)"
	srcPtBr3013   = "public GitHub file (find_string id 31786691802): go-mssqldb error text of a Brazilian Portuguese server in a tool's README, 2025-07-16"
)
