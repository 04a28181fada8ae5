package locale

// chineseSimplifiedTexts are the Simplified Chinese engine texts.
var chineseSimplifiedTexts = []text{
	{3014, ChineseSimplified, "{stmt} 成功处理了 {pages} 页，花费 {secs} 秒({rate} {unit})。", srcZhMediaSet},
	{4035, ChineseSimplified, "已为数据库 '{db}'，文件 '{file}' (位于文件 {fileno} 上)处理了 {pages} 页。", srcZhMediaSet},
}

// chineseTraditionalTexts are the Traditional Chinese engine texts.
var chineseTraditionalTexts = []text{}

const srcZhMediaSet = "public GitHub file (Chinese T-SQL media-set demo quoting the messages of RESTORE DATABASE)"
