package demo

import "time"

// The fleet is twelve instance shapes. The first Config.Instances instances
// take them in turn: the first twelve exactly as below, with their stories;
// later ones as stable copies under names of their own, with sizes, speeds
// and time zones drawn from the seed.

// shape is one kind of restoring instance and the restore jobs it runs.
type shape struct {
	pattern    string // name, with %02d for the instance number
	linux      bool
	tz         int // minutes east of UTC, printed as "UTC adjustment"
	build      string
	upgradeTo  string // a CU installed at a restart mid-period
	flags      []int  // startup trace flags (-T)
	align      int64  // file-system I/O alignment shown by TF 3213
	noIFI      bool
	endDates   bool // msdb restore_date is the end of the restore here
	edition    string
	os         string
	hw         hardware
	newHW      *hardware // hardware after a move (improvement story)
	restartTOD time.Duration
	jobs       []jobShape
}

// jobShape is one restore job of a shape.
type jobShape struct {
	kind       jobKind
	db         string // destination database
	srcDB      string // source database when it differs
	src        string // source server (takes the backups)
	srcBuild   string
	sizeGiB    float64 // logical backup size at the start of the period
	growth     float64 // size multiplier over the period (1 = flat)
	ratio      float64 // compressed/logical size; 0 = uncompressed
	level      float64 // logical throughput, MiB/s
	stripes    int
	dir        string // backup folder: {src}, {db} and {type} are filled in
	newDir     string // folder after the share move
	tod        time.Duration
	cadence    time.Duration
	story      storyKind
	copyOnly   bool
	noChecksum bool
}

// jobKind is what one run of a job restores.
type jobKind uint8

const (
	jobFull     jobKind = iota // full restore WITH RECOVERY (refresh of a copy)
	jobFullDiff                // full WITH NORECOVERY, then the latest diff WITH RECOVERY
	jobLog                     // log-shipping style log restore WITH NORECOVERY
	jobManual                  // a DBA's restore in SSMS, captured in restore-output.txt
)

// hardware is what the startup lines say about the host.
type hardware struct {
	sockets, cores, logical int // cores per socket, logical per socket
	ramMB                   int
	manufacturer, model     string
	hypervisor              bool
}

func (h hardware) cpus() int { return h.sockets * h.logical }

var (
	vmware = hardware{1, 8, 8, 65536, "VMware, Inc.", "VMware7,1", true}
	hyperV = hardware{2, 4, 4, 32768, "Microsoft Corporation", "Virtual Machine", true}
	hpe    = hardware{2, 8, 16, 262144, "HPE", "ProLiant DL380 Gen10 Plus", false}
	dell   = hardware{2, 16, 32, 524288, "Dell Inc.", "PowerEdge R750", false}
)

const (
	hour = time.Hour
	day  = 24 * time.Hour
	week = 7 * day
)

func hm(h, m int) time.Duration { return time.Duration(h)*hour + time.Duration(m)*time.Minute }

var shapes = []shape{
	{ // Seed 003: the 2016 SP1 CU8 reporting server on 4K disks.
		pattern: `RPT-SQL%02d\REPORTING`, tz: -300, build: "13.0.4474.0", flags: []int{3213, 3605}, align: 4096,
		edition: "Standard Edition", os: "Windows Server 2012 R2 Standard 6.3 <X64> (Build 9600: )",
		hw: hardware{2, 6, 12, 131072, "VMware, Inc.", "VMware7,1", true}, restartTOD: hm(15, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "Billing", src: "SQLPROD01", srcBuild: "10.50.6542.0", sizeGiB: 371.8, growth: 1.04,
				ratio: 0.363, level: 892, stripes: 1, dir: `E:\RestoreStage\{db}`, tod: hm(1, 0), cadence: day, story: stSourceUpgrade},
			{kind: jobFullDiff, db: "CRM", src: "SQLPROD03", srcBuild: "13.0.4474.0", sizeGiB: 48, growth: 1.08,
				level: 310, stripes: 2, dir: `E:\RestoreStage\{db}`, tod: hm(3, 30), cadence: day},
		},
	},
	{ // Seed 001: the 4 h restore that now takes 10 h; restore_date is the end here.
		pattern: `DWH-SQL%02d`, tz: 0, build: "15.0.4236.7", align: 512, endDates: true,
		edition: "Enterprise Edition: Core-based Licensing", os: "Windows Server 2019 Datacenter 10.0 <X64> (Build 17763: )",
		hw: hpe, restartTOD: hm(12, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "DW_Sales", src: "SQLPROD02", srcBuild: "15.0.4236.7", sizeGiB: 1587, growth: 1.03,
				ratio: 0.28, level: 113, stripes: 4, dir: `\\fs01\sqlbackup\{src}\{db}\{type}`, tod: hm(18, 0), cadence: day, story: stSlowdown},
		},
	},
	{ // Log shipping: a log restore every hour.
		pattern: `LS-SQL%02d`, tz: 60, build: "14.0.3048.4", flags: []int{3226}, align: 512,
		edition: "Standard Edition", os: "Windows Server 2016 Standard 10.0 <X64> (Build 14393: )",
		hw: vmware, restartTOD: hm(16, 0),
		jobs: []jobShape{
			{kind: jobLog, db: "Orders", src: "SQLPROD04", srcBuild: "14.0.3048.4", sizeGiB: 0.18, growth: 1.1,
				ratio: 0.45, level: 140, stripes: 1, dir: `L:\LSCopy\{db}`, tod: hm(0, 5), cadence: hour},
		},
	},
	{ // The backup share moves from a local disk to a slow NAS.
		pattern: `TEST-SQL%02d`, tz: -300, build: "15.0.4355.3", align: 512,
		edition: "Developer Edition", os: "Windows Server 2019 Standard 10.0 <X64> (Build 17763: )",
		hw: vmware, restartTOD: hm(15, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "CRM", src: "SQLPROD03", srcBuild: "13.0.4474.0", sizeGiB: 118, growth: 1.06,
				ratio: 0.32, level: 300, stripes: 1, dir: `R:\Backup\{db}`, newDir: `\\nas-archive02\sqlbackup\{src}\{db}\{type}`,
				tod: hm(2, 0), cadence: day, story: stShareMove},
			{kind: jobFull, db: "Timesheets", src: "SQLPROD05", srcBuild: "15.0.4355.3", sizeGiB: 6, growth: 1.02,
				level: 180, stripes: 1, dir: `R:\Backup\{db}`, tod: hm(4, 30), cadence: day},
		},
	},
	{ // Linux; the restore job loses its BUFFERCOUNT/MAXTRANSFERSIZE tuning.
		pattern: `LNX-SQL%02d`, linux: true, tz: 540, build: "16.0.4135.4", flags: []int{3213, 3605}, align: 4096,
		edition: "Enterprise Edition: Core-based Licensing", os: "Linux (Ubuntu 22.04.4 LTS)",
		hw: hardware{2, 8, 16, 262144, "", "", true}, restartTOD: hm(14, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "Orders", src: "SQLPROD04", srcBuild: "14.0.3048.4", sizeGiB: 240, growth: 1.05,
				ratio: 0.35, level: 400, stripes: 4, dir: `/var/opt/mssql/backup/{db}`, tod: hm(1, 30), cadence: day, story: stTuningLost},
		},
	},
	{ // A CU installed at a restart; restores run at half speed after it.
		pattern: `QA-SQL%02d\STAGING`, tz: 60, build: "15.0.4236.7", upgradeTo: "15.0.4355.3", align: 512,
		edition: "Standard Edition", os: "Windows Server 2019 Standard 10.0 <X64> (Build 17763: )",
		hw: hyperV, restartTOD: hm(16, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "Inventory", src: "SQLPROD06", srcBuild: "15.0.4236.7", sizeGiB: 64, growth: 1.05,
				ratio: 0.3, level: 250, stripes: 1, dir: `\\fs01\sqlbackup\{src}\{db}\{type}`, tod: hm(22, 15), cadence: day, story: stInstanceCU},
		},
	},
	{ // A database that grows 2.5× at a steady speed: longer, not slower.
		pattern: `ERP-SQL%02d`, tz: -300, build: "14.0.3026.27", align: 512,
		edition: "Enterprise Edition", os: "Windows Server 2016 Datacenter 10.0 <X64> (Build 14393: )",
		hw: hardware{2, 8, 8, 262144, "VMware, Inc.", "VMware7,1", true}, restartTOD: hm(15, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "Orders", src: "SQLPROD07", srcBuild: "14.0.3026.27", sizeGiB: 90, growth: 2.5,
				level: 220, stripes: 2, dir: `\\fs01\sqlbackup\{src}\{db}\{type}`, tod: hm(2, 45), cadence: day, story: stGrowth},
		},
	},
	{ // One very slow night in a stable series; TF 3004 prints the phases.
		pattern: `RPT-SQL%02d\REPORTING`, tz: 330, build: "13.0.5149.0", flags: []int{3004, 3605}, align: 512,
		edition: "Standard Edition", os: "Windows Server 2016 Standard 10.0 <X64> (Build 14393: )",
		hw: vmware, restartTOD: hm(15, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "Billing", src: "SQLPROD08", srcBuild: "13.0.5149.0", sizeGiB: 150, growth: 1.05,
				ratio: 0.33, level: 260, stripes: 1, dir: `\\fs02\sqlbackup\{src}\{db}\{type}`, tod: hm(2, 30), cadence: day, story: stOutlier},
		},
	},
	{ // Moved to new hardware: 8 → 32 logical processors, twice as fast.
		pattern: `DEV-SQL%02d`, tz: 0, build: "15.0.4355.3", align: 512,
		edition: "Developer Edition", os: "Windows Server 2019 Standard 10.0 <X64> (Build 17763: )",
		hw: vmware, newHW: &hpe, restartTOD: hm(13, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "Payroll", src: "SQLPROD09", srcBuild: "15.0.4355.3", sizeGiB: 80, growth: 1.04,
				level: 150, stripes: 1, dir: `D:\Backup\{db}`, tod: hm(3, 0), cadence: day, story: stImprovement},
		},
	},
	{ // A production server that checks its own backups; a DBA restores by hand.
		pattern: `SQLPROD%02d`, tz: 60, build: "16.0.4135.4", flags: []int{3226}, align: 512,
		edition: "Enterprise Edition: Core-based Licensing", os: "Windows Server 2022 Datacenter 10.0 <X64> (Build 20348: )",
		hw: dell, restartTOD: hm(17, 0),
		jobs: []jobShape{
			{kind: jobFullDiff, db: "Sales_Verify", srcDB: "Sales", src: "SQLPROD10", srcBuild: "16.0.4135.4", sizeGiB: 210,
				growth: 1.07, ratio: 0.3, level: 520, stripes: 2, dir: `\\fs01\sqlbackup\{src}\{db}\{type}`, tod: hm(0, 30), cadence: day},
			{kind: jobManual, db: "CRM_Restore", srcDB: "CRM", src: "SQLPROD03", srcBuild: "13.0.4474.0", sizeGiB: 118,
				ratio: 0.32, level: 480, stripes: 1, dir: `\\fs01\sqlbackup\{src}\{db}\{type}`, copyOnly: true},
		},
	},
	{ // A weekly big restore and a nightly small one.
		pattern: `BI-SQL%02d\DW`, tz: 540, build: "14.0.3048.4", align: 512,
		edition: "Enterprise Edition", os: "Windows Server 2016 Datacenter 10.0 <X64> (Build 14393: )",
		hw: hardware{2, 8, 16, 131072, "VMware, Inc.", "VMware7,1", true}, restartTOD: hm(15, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "DW_Marketing", src: "SQLPROD11", srcBuild: "14.0.3048.4", sizeGiB: 400, growth: 1.05,
				ratio: 0.3, level: 200, stripes: 4, dir: `\\fs02\sqlbackup\{src}\{db}\{type}`, tod: hm(1, 0), cadence: week},
			{kind: jobFull, db: "Marketing", src: "SQLPROD11", srcBuild: "14.0.3048.4", sizeGiB: 25, growth: 1.03,
				level: 160, stripes: 1, dir: `\\fs02\sqlbackup\{src}\{db}\{type}`, tod: hm(5, 0), cadence: day},
		},
	},
	{ // A CU that changes nothing, and instant file initialization off.
		pattern: `ARCH-SQL%02d`, tz: -480, build: "14.0.3026.27", upgradeTo: "14.0.3048.4", align: 512, noIFI: true,
		edition: "Standard Edition", os: "Windows Server 2016 Standard 10.0 <X64> (Build 14393: )",
		hw: hyperV, restartTOD: hm(15, 0),
		jobs: []jobShape{
			{kind: jobFull, db: "Archive", src: "SQLPROD12", srcBuild: "14.0.3026.27", sizeGiB: 300, growth: 1.02,
				level: 90, stripes: 1, dir: `\\nas-archive02\sqlbackup\{src}\{db}\{type}`, tod: hm(20, 0), cadence: day},
		},
	},
}

// zones are the offsets (minutes) copies of the shapes draw from.
var zones = []int{-480, -300, -180, 0, 60, 120, 330, 480, 540, 600}

// genericDBs replace a shape's database names on copies, so the fleet does
// not repeat twelve names two thousand times.
var genericDBs = []string{"Billing", "CRM", "DW_Sales", "Orders", "Inventory", "Payroll", "Sales", "HR",
	"Support", "Warehouse", "Finance", "Shipping", "Claims", "Ledger", "Assets", "Portal"}
