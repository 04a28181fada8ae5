package sqlite

import (
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

func TestDestinationFolders(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{nil, ""},
		{[]string{`D:\Data\a.mdf`, `L:\Log\a_log.ldf`, `d:\data\a_2.ndf`}, `D:\Data\ | L:\Log\`},
		{[]string{"/var/opt/mssql/data/a.mdf", "/var/opt/mssql/log/a_log.ldf"}, "/var/opt/mssql/data/ | /var/opt/mssql/log/"},
		{[]string{"a.mdf"}, ""},
	} {
		if got := store.DestinationFolders(c.files); got != c.want {
			t.Errorf("DestinationFolders(%q) = %q, want %q", c.files, got, c.want)
		}
	}
}
