package buildref_test

import (
	"testing"

	"github.com/restorewatch/restorewatch/store/buildref"
)

func v(s string) buildref.Version {
	ver, err := buildref.ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return ver
}

func TestParseBanner(t *testing.T) {
	for _, tc := range []struct {
		line string
		want buildref.Banner
	}{
		{"Microsoft SQL Server 2016 (SP1-CU8) (KB4077064) - 13.0.4474.0 (X64)",
			buildref.Banner{Product: "2016", Level: "SP1", CU: "CU8", KB: "KB4077064", Version: v("13.0.4474.0"), Arch: "X64"}},
		{"Microsoft SQL Server 2019 (RTM-CU16-GDR) (KB5014353) - 15.0.4236.7 (X64) ",
			buildref.Banner{Product: "2019", Level: "RTM", CU: "CU16", GDR: true, KB: "KB5014353", Version: v("15.0.4236.7"), Arch: "X64"}},
		{"Microsoft SQL Server 2019 (RTM) - 15.0.2000.5 (X64)",
			buildref.Banner{Product: "2019", Level: "RTM", Version: v("15.0.2000.5"), Arch: "X64"}},
		{"Microsoft SQL Server 2016 (RTM-CU2) (KB3182270) - 13.0.2161.3 (X64)",
			buildref.Banner{Product: "2016", Level: "RTM", CU: "CU2", KB: "KB3182270", Version: v("13.0.2161.3"), Arch: "X64"}},
		{"Microsoft SQL Server 2008 R2 (SP3) - 10.50.6000.34 (X64)",
			buildref.Banner{Product: "2008R2", Level: "SP3", Version: v("10.50.6000.34"), Arch: "X64"}},
		{"Microsoft SQL Server 2025 (RTM-CU3) (KB5077896) - 17.0.4025.3 (X64)",
			buildref.Banner{Product: "2025", Level: "RTM", CU: "CU3", KB: "KB5077896", Version: v("17.0.4025.3"), Arch: "X64"}},
		{"Microsoft SQL Server 2017 (RTM-CU13) (KB4466404) - 14.0.3048.4 (X64)",
			buildref.Banner{Product: "2017", Level: "RTM", CU: "CU13", KB: "KB4466404", Version: v("14.0.3048.4"), Arch: "X64"}},
		// Error-log line, Linux (Filebeat fixture) and the DD sample.
		{"2019-05-03 09:01:09.99 Server      Microsoft SQL Server 2017 (RTM-CU13) (KB4466404) - 14.0.3048.4 (X64)",
			buildref.Banner{Product: "2017", Level: "RTM", CU: "CU13", KB: "KB4466404", Version: v("14.0.3048.4"), Arch: "X64"}},
		{"2020-05-12 12:05:52.12 Server      Microsoft SQL Server 2017 (RTM-CU20) (KB4541283) - 14.0.3294.2 (X64)",
			buildref.Banner{Product: "2017", Level: "RTM", CU: "CU20", KB: "KB4541283", Version: v("14.0.3294.2"), Arch: "X64"}},
		// Whole @@VERSION value: only the first line counts.
		{"Microsoft SQL Server 2016 (RTM-CU2) (KB3182270) - 13.0.2161.3 (X64) \n\tSep  7 2016 14:24:16 \n\tCopyright (c) Microsoft Corporation\n\tStandard Edition (64-bit) on Windows Server 2012 R2 Datacenter 6.3 <X64> (Build 9600: ) (Hypervisor)\n",
			buildref.Banner{Product: "2016", Level: "RTM", CU: "CU2", KB: "KB3182270", Version: v("13.0.2161.3"), Arch: "X64"}},
		{"Microsoft SQL Server 2016 (SP1) (KB3182545) - 13.0.4001.0 (X64)\r\n        Oct 28 2016 18:17:30",
			buildref.Banner{Product: "2016", Level: "SP1", KB: "KB3182545", Version: v("13.0.4001.0"), Arch: "X64"}},
		// 2012 and 2014 forms: RTM prints no level group.
		{"Microsoft SQL Server 2012 - 11.0.2100.60 (X64)",
			buildref.Banner{Product: "2012", Version: v("11.0.2100.60"), Arch: "X64"}},
		{"Microsoft SQL Server 2012 - 11.0.2100.60 (Intel X86)",
			buildref.Banner{Product: "2012", Version: v("11.0.2100.60"), Arch: "Intel X86"}},
		{"Microsoft SQL Server 2012 (SP1) - 11.0.3128.0 (X64)",
			buildref.Banner{Product: "2012", Level: "SP1", Version: v("11.0.3128.0"), Arch: "X64"}},
		{"Microsoft SQL Server 2012 (SP4) (KB4018073) - 11.0.7001.0 (X64)",
			buildref.Banner{Product: "2012", Level: "SP4", KB: "KB4018073", Version: v("11.0.7001.0"), Arch: "X64"}},
		{"Microsoft SQL Server 2012 (SP2-GDR) (KB3194719) - 11.0.5388.0 (X64)",
			buildref.Banner{Product: "2012", Level: "SP2", GDR: true, KB: "KB3194719", Version: v("11.0.5388.0"), Arch: "X64"}},
		{"Microsoft SQL Server 2014 - 12.0.2000.8 (X64)",
			buildref.Banner{Product: "2014", Version: v("12.0.2000.8"), Arch: "X64"}},
		{"Microsoft SQL Server 2014 (SP1-CU7) (KB3162659) - 12.0.4459.0 (X64)",
			buildref.Banner{Product: "2014", Level: "SP1", CU: "CU7", KB: "KB3162659", Version: v("12.0.4459.0"), Arch: "X64"}},
		{"Microsoft SQL Server 2014 (SP3) (KB4022619) - 12.0.6024.0 (X64)",
			buildref.Banner{Product: "2014", Level: "SP3", KB: "KB4022619", Version: v("12.0.6024.0"), Arch: "X64"}},
		{"Microsoft SQL Server 2014 (SP2-GDR) (KB4505217) - 12.0.5223.6 (X64)",
			buildref.Banner{Product: "2014", Level: "SP2", GDR: true, KB: "KB4505217", Version: v("12.0.5223.6"), Arch: "X64"}},
		{"Microsoft SQL Server 2019 (RTM-CU18-GDR) (KB5021124) - 15.0.4280.7 (X64)",
			buildref.Banner{Product: "2019", Level: "RTM", CU: "CU18", GDR: true, KB: "KB5021124", Version: v("15.0.4280.7"), Arch: "X64"}},
		// Older and pre-release forms.
		{"Microsoft SQL Server 2005 - 9.00.5000.00 (X64)",
			buildref.Banner{Product: "2005", Version: v("9.0.5000.0"), Arch: "X64"}},
		{"Microsoft SQL Server  2000 - 8.00.2039 (Intel X86)",
			buildref.Banner{Product: "2000", Version: v("8.0.2039"), Arch: "Intel X86"}},
		{"Microsoft SQL Server 2019 (CTP2.1) - 15.0.1100.94 (X64)",
			buildref.Banner{Product: "2019", Level: "CTP2.1", Version: v("15.0.1100.94"), Arch: "X64"}},
		{"Microsoft SQL Server vNext (CTP2.0) - 14.0.500.272 (X64) \n\tApr 13 2017 11:44:40",
			buildref.Banner{Product: "2017", Level: "CTP2.0", Version: v("14.0.500.272"), Arch: "X64"}},
		{"Microsoft SQL Server 2022 (RTM-GDR) (KB5021522) - 16.0.1050.5 (X64)",
			buildref.Banner{Product: "2022", Level: "RTM", GDR: true, KB: "KB5021522", Version: v("16.0.1050.5"), Arch: "X64"}},
		// Azure SQL Edge (ARM64 and x64, flattened with tabs) and Azure SQL.
		{"Microsoft Azure SQL Edge Developer (RTM) - 15.0.2000.1574 (ARM64) \n\tJan 25 2023 10:36:08",
			buildref.Banner{Product: "Azure SQL Edge", Level: "RTM", Version: v("15.0.2000.1574"), Arch: "ARM64"}},
		{"Microsoft Azure SQL Edge Developer (RTM) - 15.0.2000.1574 (ARM64)  \tJan 25 2023 10:36:08  \tCopyright (C) 2019 Microsoft Corporation \tLinux (Ubuntu 18.04.6 LTS aarch64) <ARM64>",
			buildref.Banner{Product: "Azure SQL Edge", Level: "RTM", Version: v("15.0.2000.1574"), Arch: "ARM64"}},
		{"Microsoft SQL Azure (RTM) - 12.0.2000.8 \n\tFeb 20 2021 17:51:58",
			buildref.Banner{Product: "Azure SQL", Level: "RTM", Version: v("12.0.2000.8")}},
		// Flattened @@VERSION, as some tools print it.
		{"Microsoft SQL Server 2012 - 11.0.2100.60 (X64)   Feb 10 2012 19:39:15   Copyright (c) Microsoft Corporation  Enterprise Edition",
			buildref.Banner{Product: "2012", Version: v("11.0.2100.60"), Arch: "X64"}},
		{"Microsoft SQL Server 2012 - 11.0.2100.60",
			buildref.Banner{Product: "2012", Version: v("11.0.2100.60")}},
	} {
		got, ok := buildref.ParseBanner(tc.line)
		if !ok || got != tc.want {
			t.Errorf("ParseBanner(%q)\n got %+v, %v\nwant %+v", tc.line, got, ok, tc.want)
		}
	}
}

func TestParseBannerJunk(t *testing.T) {
	for _, line := range []string{
		"",
		"Microsoft SQL Server",
		"Microsoft SQL Server 2019",
		"Microsoft SQL Server 2019 (RTM)",
		"Microsoft SQL Server 2019 (RTM) - ",
		"Microsoft SQL Server 2019 (RTM) - 15.0 (X64)",
		"Microsoft SQL Server 2019 (RTM) - v15.0.2000.5 (X64)",
		"Microsoft SQL Server 2019 (RTM - 15.0.2000.5 (X64)",
		"Microsoft SQL Server 2019 (R!M) - 15.0.2000.5 (X64)",
		"Microsoft SQL Server 2014 (SP3-GDR) 12.0.6179.1 (X64)",
		"Microsoft SQL Server Management Studio - 15.0.18424.0",
		"Microsoft SQL Serverless - 15.0.2000.5",
		"Microsoft SQL Server - 15.0.2000.5 (X64)",
		"Microsoft SQL Server  7.00 - 7.00.1063 (Intel X86)",
		"2022-07-08 05:42:11.91 spid12s     The resource database build version is 15.00.4236. This is an informational message only.",
		"2019-05-03 09:01:09.99 Server      UTC adjustment: 0:00",
		"\tMay 29 2022 15:55:47 ",
		"PostgreSQL 16.2 on x86_64-pc-linux-gnu",
	} {
		if got, ok := buildref.ParseBanner(line); ok {
			t.Errorf("ParseBanner(%q) = %+v, true; want false", line, got)
		}
	}
}
