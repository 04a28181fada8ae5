package store

import (
	"errors"
	"fmt"
)

// Error codes: a small set the web layer maps to HTTP statuses and the CLI to
// exit codes.
const (
	ECONFLICT    = "conflict"
	EINTERNAL    = "internal"
	EINVALID     = "invalid"
	ENOTFOUND    = "not_found"
	EFORBIDDEN   = "forbidden" // authenticated, but not allowed to write that
	EUNAVAILABLE = "unavailable"
)

// Error is an error with a code and a message meant for the user.
type Error struct {
	Code    string
	Message string
	// Err is what the message wraps (Errorf's %w operands), or nil.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the wrapped error, so errors.Is and errors.As see
// through an *Error to the cause Errorf's %w named.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and formatted message. It
// formats as fmt.Errorf does, so a %w operand is wrapped.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	e := &Error{Code: code, Message: err.Error()}
	switch err.(type) {
	case interface{ Unwrap() error }, interface{ Unwrap() []error }:
		e.Err = err
	}
	return e
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err: the *Error's message,
// or a generic sentence for internal errors, which may hold details (paths,
// SQL) that do not belong on a page.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	}
	return "internal error"
}
