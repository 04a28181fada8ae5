package locale

var (
	germanTexts     = []text{}
	frenchTexts     = []text{}
	japaneseTexts   = []text{}
	spanishTexts    = []text{}
	italianTexts    = []text{}
	portugueseTexts = []text{}
	koreanTexts     = []text{}
)
