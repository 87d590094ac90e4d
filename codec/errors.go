package codec

import (
	"errors"
	"fmt"
)

// Reason says why a record was rejected. Reasons are low-cardinality, snake_case
// and stable: the runtime uses them as a Prometheus label value and as the reason
// header of a dead-letter record, so a Reason's string never changes once released.
type Reason string

// The reasons a record can be rejected for. See the package documentation for
// which one is reported when a record has several problems.
const (
	ReasonNotMsgpack        Reason = "not_msgpack"            // bytes are not valid msgpack, or are truncated
	ReasonNotMap            Reason = "not_a_map"              // the top-level value is not a map
	ReasonMissingVersion    Reason = "missing_version"        // no "v" key (or "v" is nil)
	ReasonUnknownVersion    Reason = "unknown_version"        // "v" is an integer this codec does not know
	ReasonBadFieldType      Reason = "bad_field_type"         // e.g. "x" is a string, "id" is an array, a map key is not a string
	ReasonDuplicateKey      Reason = "duplicate_key"          // a known key appears twice in one map
	ReasonMissingFeatures   Reason = "missing_features"       // none of "x", "xi"/"xv", "f" (or only one of "xi", "xv")
	ReasonDenseAndSparse    Reason = "dense_and_sparse"       // features in two forms: "x" and "xi"/"xv", or "f" with either
	ReasonEmptyFeatures     Reason = "empty_features"         // zero features
	ReasonTooManyFeatures   Reason = "too_many_features"      // more than Limits.MaxFeatures
	ReasonNonFinite         Reason = "non_finite"             // NaN or ±Inf in a feature value or in "y"
	ReasonSparseLength      Reason = "sparse_length_mismatch" // len(xi) != len(xv)
	ReasonSparseUnsorted    Reason = "sparse_unsorted"        // xi not strictly increasing
	ReasonSparseDuplicate   Reason = "sparse_duplicate"       // the same index twice in xi
	ReasonSparseOutOfRange  Reason = "sparse_out_of_range"    // an index is negative, >= Limits.Dim, or > 2^32-1
	ReasonDimensionMismatch Reason = "dimension_mismatch"     // len(x) != Limits.Dim
	ReasonOversized         Reason = "oversized"              // the record is longer than Limits.MaxBytes
	ReasonTrailingBytes     Reason = "trailing_bytes"         // bytes after the top-level map

	// Since schema version 2 (feedback events).
	ReasonMissingLabel         Reason = "missing_label"          // a feedback event (non-empty "ref") without "y"
	ReasonFeedbackWithFeatures Reason = "feedback_with_features" // a feedback event that also carries "x", "xi", "xv" or "f"

	// Limits on values and strings (both off in the zero Limits).
	ReasonValueOutOfRange Reason = "value_out_of_range" // |a feature value| or |y| above Limits.MaxAbsValue
	ReasonIDTooLong       Reason = "id_too_long"        // "id", "key" or "ref" longer than Limits.MaxIDBytes

	// Since schema version 3 (named features) and JSON input.
	ReasonNameTooLong      Reason = "name_too_long"      // a feature name or string value in "f" longer than Limits.MaxNameBytes
	ReasonNotJSON          Reason = "not_json"           // DecodeEventJSON: not valid JSON (or UTF-8), truncated, or nested too deep
	ReasonLooksLikeJSON    Reason = "looks_like_json"    // DecodeEvent: the record starts like JSON ('{' or '['); use --input-format json
	ReasonLooksLikeMsgpack Reason = "looks_like_msgpack" // DecodeEventJSON: the record starts with a msgpack map code; use --input-format msgpack
)

var allReasons = [...]Reason{
	ReasonNotMsgpack,
	ReasonNotMap,
	ReasonMissingVersion,
	ReasonUnknownVersion,
	ReasonBadFieldType,
	ReasonDuplicateKey,
	ReasonMissingFeatures,
	ReasonDenseAndSparse,
	ReasonEmptyFeatures,
	ReasonTooManyFeatures,
	ReasonNonFinite,
	ReasonSparseLength,
	ReasonSparseUnsorted,
	ReasonSparseDuplicate,
	ReasonSparseOutOfRange,
	ReasonDimensionMismatch,
	ReasonOversized,
	ReasonTrailingBytes,
	ReasonMissingLabel,
	ReasonFeedbackWithFeatures,
	ReasonValueOutOfRange,
	ReasonIDTooLong,
	ReasonNameTooLong,
	ReasonNotJSON,
	ReasonLooksLikeJSON,
	ReasonLooksLikeMsgpack,
}

// Reasons returns every Reason this package can report, in a fixed order, so that
// a caller can create all metric series up front. The slice is a fresh copy.
func Reasons() []Reason {
	out := make([]Reason, len(allReasons))
	copy(out, allReasons[:])
	return out
}

// Error is the error returned for a record that cannot be decoded or encoded.
// Every error returned by this package's decode and append functions is an *Error.
type Error struct {
	Reason Reason // why; stable, for metrics and dead-letter headers
	Field  string // the offending key ("x", "y", "m[1].s", ...); "" for record-level problems
	Detail string // human-readable specifics; not stable, do not parse
}

// Error returns a one-line message naming the field, the problem and the reason,
// e.g. `codec: field "x": element 3 is NaN (non_finite)`.
func (e *Error) Error() string {
	detail := e.Detail
	if detail == "" {
		detail = string(e.Reason)
	}
	if e.Field != "" {
		return fmt.Sprintf("codec: field %q: %s (%s)", e.Field, detail, e.Reason)
	}
	return fmt.Sprintf("codec: %s (%s)", detail, e.Reason)
}

// Is reports whether target is an *Error with the same Reason, so that
// errors.Is(err, &codec.Error{Reason: codec.ReasonNonFinite}) works.
// Field and Detail of target are ignored.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason == e.Reason
}

// ReasonOf returns the Reason of the first *Error in err's chain, or "" if there
// is none (err is nil or did not come from this package).
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func newError(r Reason, field, format string, args ...any) *Error {
	return &Error{Reason: r, Field: field, Detail: fmt.Sprintf(format, args...)}
}
