package main

import (
	"os"
	"strings"
)

// paper is a sheet the PDF report prints on, in inches (the DevTools
// protocol's unit).
type paper struct {
	name          string
	width, height float64
}

var papers = map[string]paper{
	"a4":     {"A4", 210 / 25.4, 297 / 25.4},
	"letter": {"Letter", 8.5, 11},
}

// letterTerritories print on Letter; everywhere else A4 is the norm
// (glibc's LC_PAPER for these territories says the same).
var letterTerritories = map[string]bool{"US": true, "CA": true, "MX": true, "PR": true, "PH": true, "CL": true,
	"CO": true, "VE": true, "CR": true, "GT": true, "NI": true, "PA": true, "SV": true, "DO": true}

// defaultPaper is the paper of the user's locale: the territory of
// LC_ALL, else LC_PAPER, else LANG ("en_US.UTF-8" → Letter, "de_DE" → A4),
// and A4 when none names one (the C and POSIX locales included).
func defaultPaper(getenv func(string) string) paper {
	for _, k := range []string{"LC_ALL", "LC_PAPER", "LANG"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		v, _, _ = strings.Cut(v, ".")
		v, _, _ = strings.Cut(v, "@")
		if _, territory, ok := strings.Cut(v, "_"); ok && letterTerritories[strings.ToUpper(territory)] {
			return papers["letter"]
		}
		return papers["a4"]
	}
	return papers["a4"]
}

// paperOf reads --paper: A4 or Letter, case ignored; "" is the locale's.
func paperOf(flag string) (paper, bool) {
	if flag == "" {
		return defaultPaper(os.Getenv), true
	}
	p, ok := papers[strings.ToLower(flag)]
	return p, ok
}
