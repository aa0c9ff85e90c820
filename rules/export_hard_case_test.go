package rules

// For catalogue_views_test.go, which reads the status page and /metrics
// from outside the package: the hard case's catalogue and kind.

// HardCaseCatalogue is Catalogue() plus the tape rule of
// catalogue_hard_case_test.go.
func HardCaseCatalogue() []Rule { return append(Catalogue(), tapeCleaningRule()) }

// TapeLibrary is the kind of fact that rule reads.
var TapeLibrary = tapeLibrary

// TapeReport is a tape library report whose drive in slot asks for cleaning.
func TapeReport(slot int) any {
	return tapeLibraryData{Drives: []tapeDrive{{Slot: slot, CleaningDue: true}}}
}
