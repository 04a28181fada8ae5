package demo

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// messagesWriter writes messages/INSTANCE/restore-output.txt: the SSMS
// Messages tab of the manual restores, pasted one after the other, in a
// folder named after the server, as a DBA hands such files over (client
// output never names its server: `import --instance-from-dir` reads the
// folder's name). The same restores are in the error log and the history
// CSV, so the import must merge, not add.
type messagesWriter struct {
	dir      string
	path     string
	instance string
	f        *os.File
	b        *bufio.Writer
	c        *counter
	n        int
}

// write adds one statement's output: STATS progress, a 4035 line per file,
// the 3014 line and SSMS's client-side completion stamp (CRLF, as SSMS
// saves text).
func (m *messagesWriter) write(r *restore) error {
	if m.f == nil {
		m.path = filepath.Join(m.dir, r.s.in.name, "restore-output.txt")
		f, b, c, err := createFile(m.path)
		if err != nil {
			return err
		}
		m.f, m.b, m.c, m.instance = f, b, c, r.s.in.name
	}
	m.n++
	s := r.s
	for p := 10; p <= 100; p += 10 {
		fmt.Fprintf(m.b, "%d percent processed.\r\n", p)
	}
	fmt.Fprintf(m.b, "Processed %d pages for database '%s', file '%s' on file 1.\r\n", r.pages, s.db, s.srcDB)
	fmt.Fprintf(m.b, "Processed %d pages for database '%s', file '%s_log' on file 1.\r\n", r.logPages, s.db, s.srcDB)
	fmt.Fprintf(m.b, "RESTORE DATABASE successfully processed %d pages in %s seconds (%s MB/sec).\r\n",
		r.totalPages(), seconds(r.durMS), mbps(r.totalPages(), r.durMS))
	// The client hears of the end a little after the server logs it.
	done := s.in.local(r.end()).Add(time.Duration(40+r.durMS%80) * time.Millisecond)
	fmt.Fprintf(m.b, "\r\nCompletion time: %s\r\n\r\n", ssmsCompletion(done, s.in.tz))
	return nil
}

func (m *messagesWriter) close() (int64, error) {
	if m.f == nil {
		return 0, nil
	}
	err := m.b.Flush()
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	m.f = nil
	if err != nil {
		return m.c.n, fmt.Errorf("demo: %s: %w", m.path, err)
	}
	return m.c.n, nil
}
