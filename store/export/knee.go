package export

import "github.com/restorewatch/restorewatch/store/analysis"

// Knee is a restore's knee as its exported row carries it: the figures of
// its analysis.KneeFinding, the known issues that match and the checks its
// facts point to (the whole finding is at /api/knees).
type Knee struct {
	Percent     float64  `json:"percent"`
	BeforeMiBps float64  `json:"before_mibps,omitempty"`
	AfterMiBps  float64  `json:"after_mibps,omitempty"`
	Slowdown    float64  `json:"slowdown"`
	KnownIssues []string `json:"known_issues"`
	Checks      []string `json:"checks"`
}

// AttachKnees sets the Knee of each row whose restore has a finding in ks.
func AttachKnees(rows []RestoreRow, ks []analysis.KneeFinding) {
	by := map[int64]*analysis.KneeFinding{}
	for i := range ks {
		if ks[i].RestoreID > 0 {
			by[ks[i].RestoreID] = &ks[i]
		}
	}
	for i := range rows {
		k := by[rows[i].ID]
		if k == nil {
			continue
		}
		kn := &Knee{Percent: Round(k.Percent, 1), BeforeMiBps: Round(k.BeforeMiBs, 3), AfterMiBps: Round(k.AfterMiBs, 3),
			Slowdown: Round(k.Slowdown, 2), KnownIssues: []string{}, Checks: []string{}}
		for _, ki := range k.Issues {
			kn.KnownIssues = append(kn.KnownIssues, ki.ID)
		}
		for _, c := range k.Checks {
			if c.Fits {
				kn.Checks = append(kn.Checks, c.Name)
			}
		}
		rows[i].Knee = kn
	}
}
