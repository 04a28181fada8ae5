package locale

// russianTexts are the Russian engine texts. Real Agent job output posted
// publicly prints the rate unit as "MБ/сек" (a Latin M and a Cyrillic Б);
// the unit is matched loosely.
var russianTexts = []text{
	{3014, Russian, "{stmt} успешно обработал {pages} страниц за {secs} секунд ({rate} {unit}).", srcRuAgentLab},
	{4035, Russian, `Обработано {pages} страниц для базы данных "{db}", файл "{file}" для файла {fileno}.`, srcRuAgentLab},
}

const srcRuAgentLab = "public GitHub file (Russian lab report quoting SQL Agent job output, 2024-12-15)"
