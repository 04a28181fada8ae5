package locale

// englishTexts are the engine's English texts (reference
// sqlserver-formats.md §2.4), so that English input is recognised as itself.
// The completion messages end in "{any}": real logs print both "No user
// action required." and "No user action is required.".
var englishTexts = []text{
	{3014, English, "{stmt} successfully processed {pages} pages in {secs} seconds ({rate} MB/sec).", srcDocsEN3000},
	{4035, English, "Processed {pages} pages for database '{db}', file '{file}' on file {fileno}.", srcDocsEN4000},
	{3211, English, "{pct} percent processed.", srcDocsEN3000},
	{3013, English, "{stmt} is terminating abnormally.", srcDocsEN3000},
	{18264, English, "Database backed up. Database: {db}, creation date(time): {cdate}({ctime}), pages dumped: {dumped}, first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). {any}", srcDocsEN18000},
	{18265, English, "Log was backed up. Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). {any}", srcDocsEN18000},
	{18267, English, "Database was restored: Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). {any}", srcDocsEN18000},
	{18268, English, "Log was restored. Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). {any}", srcDocsEN18000},
	{18269, English, "Database file was restored. Database: {db}, creation date(time): {cdate}({ctime}), file list: ({flist}), number of dump devices: {ndev}, device information: ({dev}). {any}", srcDocsEN18000},
	{18271, English, "Database changes were restored. Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). {any}", srcDocsEN18000},
	{18277, English, "Database file changes were restored. Database: {db}, creation date(time): {cdate}({ctime}), file list: ({flist}), number of dump devices: {ndev}, device information: ({dev}). {any}", srcDocsEN18000},
}

// The localized texts. Only what public material shows is here; every other
// (language, message) pair is absent on purpose (see the package README in
// testdata/realworld/localized). The 3014 rate unit is a loose slot: posted
// lines print "MB/sec", "MB/s", "MB/秒" and the mixed-script "MБ/сек".

// germanTexts: only 3211 was found ("50 Prozent verarbeitet.").
var germanTexts = []text{
	{3211, German, "{pct} Prozent verarbeitet.", srcGosmo3211},
}

// frenchTexts: no public French text of these messages was found.
var frenchTexts = []text{}

// japaneseTexts: 3014 and 4035 from real output (the 3014 line matches the
// SQL Server 2008 catalogue's template word for word), 3013 from the
// catalogue only, 3211 as quoted by a client's test.
var japaneseTexts = []text{
	{3014, Japanese, "{stmt} により {pages} ページが {secs} 秒間で正常に処理されました ({rate} {unit})。", srcJaRestore},
	{4035, Japanese, "データベース '{db}' の {pages} ページ、ファイル {fileno} のファイル '{file}' を処理しました。", srcJaRestore},
	{3013, Japanese, "{stmt} は異常終了しました。", srcDocsJA3000},
	{3211, Japanese, "{pct} パーセント処理されました。", srcGosmo3211},
}

// spanishTexts: all from real sqlcmd and SSMS output. 3211 has no space
// between the number and "por" ("10por ciento procesado.").
var spanishTexts = []text{
	{3014, Spanish, "{stmt} procesó correctamente {pages} páginas en {secs} segundos ({rate} {unit}).", srcEsBeerCap},
	{4035, Spanish, "Se han procesado {pages} páginas para la base de datos '{db}', archivo '{file}' en el archivo {fileno}.", srcEsBeerCap},
	{3211, Spanish, "{pct}por ciento procesado.", srcEsBeerCap},
}

// italianTexts: no public Italian text of these messages was found.
var italianTexts = []text{}

// portugueseTexts (Brazil): only 3013, from a go-mssqldb error string.
var portugueseTexts = []text{
	{3013, PortugueseBrazil, "{stmt} está sendo encerrado de forma anormal.", srcPtBr3013},
}

// russianTexts: all from real Agent job and SSMS output. Names are printed
// in double quotes.
var russianTexts = []text{
	{3014, Russian, "{stmt} успешно обработал {pages} страниц за {secs} секунд ({rate} {unit}).", srcRuAgentLab},
	{4035, Russian, `Обработано {pages} страниц для базы данных "{db}", файл "{file}" для файла {fileno}.`, srcRuAgentLab},
	{3013, Russian, "{stmt} прервано с ошибкой.", srcRu3013},
}

// koreanTexts: 3014 and 3013 from the SQL Server 2008 Korean catalogue only
// (no posted Korean output was found).
var koreanTexts = []text{
	{3014, Korean, "{stmt}이(가) {pages}개의 페이지를 {secs}초 동안 처리했습니다({rate}{unit}).", srcDocsKO3000},
	{3013, Korean, "{stmt}이(가) 비정상적으로 종료됩니다.", srcDocsKO3000},
}

// chineseSimplifiedTexts: 3014, 4035 and 3013 from real output, 3211 as
// quoted by a client's test. Punctuation is full-width (，。).
var chineseSimplifiedTexts = []text{
	{3014, ChineseSimplified, "{stmt} 成功处理了 {pages} 页，花费 {secs} 秒({rate} {unit})。", srcZhMediaSet},
	{4035, ChineseSimplified, "已为数据库 '{db}'，文件 '{file}' (位于文件 {fileno} 上)处理了 {pages} 页。", srcZhMediaSet},
	{3013, ChineseSimplified, "{stmt} 正在异常终止。", srcZh3013Log},
	{3211, ChineseSimplified, "已处理百分之 {pct}。", srcGosmo3211},
}

// chineseTraditionalTexts: no public Traditional Chinese text of these
// messages was found.
var chineseTraditionalTexts = []text{}
