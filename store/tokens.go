package store

import "time"

// CollectorToken is what the warehouse knows of a pushing collector's
// credential: its name and dates, never the token (only its SHA-256 is
// kept).
type CollectorToken struct {
	Name    string     `json:"name"`
	Created time.Time  `json:"created"`
	Revoked *time.Time `json:"revoked,omitempty"`
	Used    *time.Time `json:"used,omitempty"` // last batch applied
	// Instances are the names or patterns given at creation (the zone's
	// instances); none means any instance not yet in the warehouse.
	Instances []string `json:"instances"`
	// Claimed are the instances the collector wrote first, which only it
	// may write.
	Claimed []string `json:"claimed"`
	// AGs are the availability groups whose replicas in this zone a plan
	// may merge with other zones' (the operator's word, token create --ag).
	AGs []string `json:"ags"`
}

// ValidCollectorName reports whether name can name a collector: 1 to 64
// letters, digits, '.', '_' or '-'. The name is shown on pages and in logs
// and is the prefix of the imports a collector's batches make.
func ValidCollectorName(name string) error {
	if name == "" || len(name) > 64 {
		return Errorf(EINVALID, "collector name %q: want 1 to 64 characters", name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return Errorf(EINVALID, "collector name %q: use letters, digits, '.', '_' and '-' only", name)
		}
	}
	return nil
}
