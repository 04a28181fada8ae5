package main

import (
	"os"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/buildref"
)

// reference returns the build list: the embedded one, merged with the user's
// --build-reference file when given.
func (m *Main) reference() (*buildref.Reference, error) {
	ref := buildref.Default()
	if m.cli.BuildReference == "" {
		return ref, nil
	}
	f, err := os.Open(m.cli.BuildReference)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "build reference: %v", err)
	}
	defer f.Close()
	user, err := buildref.Load(f)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "build reference %s: %v", m.cli.BuildReference, err)
	}
	return ref.Merge(user), nil
}

// namer returns a function naming a version ("2016 SP1 CU8", with "≈" in front
// when only the nearest lower listed build was found).
func (m *Main) namer() (func(string) string, error) {
	ref, err := m.reference()
	if err != nil {
		return nil, err
	}
	return ref.Namer(), nil
}
