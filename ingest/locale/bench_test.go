package locale_test

import (
	"testing"

	"github.com/restorewatch/restorewatch/ingest/locale"
)

// The parsers call Canonical on every line the English matcher did not
// recognise, so the miss on an ordinary line is the case that matters.
var benchLines = []struct{ name, text string }{
	{"miss_english_login", "Login failed for user 'sa'. Reason: Password did not match that for the login provided. [CLIENT: 10.0.0.5]"},
	{"miss_english_nodigit", "Starting up database 'msdb'."},
	{"miss_german_login", "Fehler bei der Anmeldung für den Benutzer 'sa'. Ursache: Das Kennwort stimmt nicht. [CLIENT: 10.0.0.5]"},
	{"miss_russian_job", `Задание "DB_Diff_Backup(task2)": шаг 1, "Создание дифф. копии": началось выполнение 2024-12-15 00:33:15`},
	{"hit_japanese_3014", "RESTORE DATABASE により 25793 ページが 2.191 秒間で正常に処理されました (91.967 MB/秒)。"},
	{"hit_russian_4035", `Обработано 528 страниц для базы данных "DiffBackupTestDB", файл "TestDB" для файла 33.`},
	{"hit_chinese_fullwidth", "RESTORE DATABASE 成功处理了 １７７ 页，花费 ０．７１６ 秒（２．０２５ MB/秒）。"},
}

func BenchmarkCanonical(b *testing.B) {
	for _, l := range benchLines {
		b.Run(l.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				locale.Canonical(l.text)
			}
		})
	}
}

func BenchmarkLooksLikeRestoreStat(b *testing.B) {
	for _, l := range benchLines[:4] {
		b.Run(l.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				locale.LooksLikeRestoreStat(l.text)
			}
		})
	}
}
