// Package buildref names SQL Server builds: it turns a version such as
// 13.0.4474.0 into the release it belongs to ("2016 SP1 CU8", KB4077064) and
// reads the startup banner / @@VERSION line that states a build's own level.
//
// Two lists feed it. The project ships a small list of its own (builds.json,
// embedded; see Default), written from public release facts and cross-checked
// entry by entry against the dbatools build reference by the package tests. A
// user can load a newer dbatools-format file (Load) and lay it over the
// embedded one (Merge).
//
// A build missing from the list is named after the nearest lower listed build
// of the same product and marked Approximate; text the server states about
// itself (banner "(RTM-CU2) (KB3182270)", SERVERPROPERTY ProductUpdateLevel and
// ProductUpdateReference) wins over the list (Resolve, ResolveBanner).
package buildref
