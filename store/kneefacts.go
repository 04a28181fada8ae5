package store

// DeviceBackup is what the backup history says about the backup written to
// some files: a restore seen in flight names only its files, and its size
// and compression come from here.
type DeviceBackup struct {
	Instance       string // whose msdb recorded the backup
	Database       string
	Size           int64 // backup_size; 0 = unknown
	CompressedSize int64 // compressed_backup_size; 0 = unknown
	Families       int   // stripes; 0 = unknown
	// Filestream says the set holds a FILESTREAM or FileTable container
	// (backupfile type S, or F as some exports write it).
	Filestream bool
}
