package buildref_test

import (
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/buildref"
)

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"13.0.4474.0", "13.0.4474", "13.00.4474", "9.00.5000.00", "", "1.2",
		"1.2.3.4.5", "13.0.-1", "999999999.0.0.0", "1234567890.0.0", " 15.0.2000.5 ", "1..2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := buildref.ParseVersion(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "buildref: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Build < 0 || v.Revision < 0 {
			t.Fatalf("ParseVersion(%q) = %v: negative part", s, v)
		}
		again, err := buildref.ParseVersion(v.String())
		if err != nil || again != v || again.Compare(v) != 0 {
			t.Fatalf("round trip of %q: %v → %q → %v, %v", s, v, v.String(), again, err)
		}
		// Lookup and naming never panic on any parsed version.
		_ = buildref.Default().Lookup(v).Name()
	})
}

func FuzzParseBanner(f *testing.F) {
	for _, s := range []string{
		"Microsoft SQL Server 2016 (SP1-CU8) (KB4077064) - 13.0.4474.0 (X64)",
		"Microsoft SQL Server 2019 (RTM-CU16-GDR) (KB5014353) - 15.0.4236.7 (X64) ",
		"Microsoft SQL Server 2008 R2 (SP3) - 10.50.6000.34 (X64)",
		"Microsoft SQL Server 2012 - 11.0.2100.60 (X64)\n\tFeb 10 2012 19:39:15",
		"Microsoft SQL Server  2000 - 8.00.2039 (Intel X86)",
		"Microsoft SQL Server vNext (CTP2.0) - 14.0.500.272 (X64)",
		"Microsoft Azure SQL Edge Developer (RTM) - 15.0.2000.1574 (ARM64)",
		"Microsoft SQL Azure (RTM) - 12.0.2000.8",
		"2019-05-03 09:01:09.99 Server      Microsoft SQL Server 2017 (RTM-CU13) (KB4466404) - 14.0.3048.4 (X64)",
		"Microsoft SQL Server 2019 (RTM - 15.0.2000.5 (X64)",
		"Microsoft SQL Server 2019 ((((",
	} {
		f.Add(s)
	}
	ref := buildref.Default()
	f.Fuzz(func(t *testing.T, line string) {
		b, ok := buildref.ParseBanner(line)
		if !ok {
			if b != (buildref.Banner{}) {
				t.Fatalf("ParseBanner(%q) = %+v with false; want zero Banner", line, b)
			}
			return
		}
		if b.Product == "" {
			t.Fatalf("ParseBanner(%q): empty Product", line)
		}
		if v := b.Version; v.Major < 0 || v.Minor < 0 || v.Build < 0 || v.Revision < 0 {
			t.Fatalf("ParseBanner(%q): negative version %v", line, v)
		}
		if b.KB != "" && !strings.HasPrefix(b.KB, "KB") {
			t.Fatalf("ParseBanner(%q): KB %q", line, b.KB)
		}
		// Only the first line counts, and an error-log prefix changes nothing.
		if again, ok := buildref.ParseBanner(line + "\n\tMicrosoft SQL Server 2099 - 1.2.3 (X)"); !ok || again != b {
			t.Fatalf("ParseBanner(%q + second line) = %+v, %v; want %+v", line, again, ok, b)
		}
		if !strings.ContainsAny(line, "\r\n") {
			if again, ok := buildref.ParseBanner("2019-05-03 09:01:09.99 Server      " + line); !ok || again != b {
				t.Fatalf("ParseBanner(prefix + %q) = %+v, %v; want %+v", line, again, ok, b)
			}
		}
		r := ref.ResolveBanner(b)
		if r.Version != b.Version || r.Name() == "" {
			t.Fatalf("ResolveBanner(%+v) = %+v", b, r)
		}
	})
}
