// Package dataset reads the public datasets okstream evaluates learners on
// (LIBSVM sparse text, CSV, and JSON lines of runtime events; CSV with
// categorical and missing cells as named features), scales them, and draws the seeded
// permutations of the online-learning protocol.
//
// Two ways to read a file:
//
//   - Open returns a *Reader that yields one Example at a time in file order,
//     with memory independent of the file's length: the way to replay a large
//     file into a stream.
//   - Load reads a whole file into a *Dataset (dense rows), the way to run
//     offline evaluations, which permute, subset and scale the rows.
//
// Both go through the same line parsers, so a file streams to exactly the
// rows it loads to.
//
// # Format detection (Options.Format = FormatAuto)
//
//  1. By extension, case-insensitively: .csv, .tsv and .data are CSV;
//     .libsvm, .svm and .svmlight are LIBSVM; .arff is rejected (use the
//     derived CSV beside it).
//  2. Any other name (w7a, w7a.t, german.numer_scale, x.txt, ...) is sniffed:
//     blank and '#' lines are skipped, and the first line that has more than
//     a label decides. If it is `label idx:val ...` (a number, then tokens
//     whose part before ':' is a positive integer or "qid"), the file is
//     LIBSVM; anything else is CSV. A file whose sniffed lines are all bare
//     labels (LIBSVM rows with no features), or that has no data line at all,
//     is LIBSVM.
//
// # LIBSVM
//
// A line is `label idx:val idx:val ...`, tokens separated by blanks and tabs.
//   - The label is any finite float: +1, -1, 1, 1.0, -1.0, 2, 3.5 all parse;
//     mapping them to classes is Dataset.BinaryLabels' job.
//   - Indices are 1-based and must be strictly increasing (a ParseError
//     otherwise). Missing indices are 0; explicit zeros (13:0.0) are accepted.
//   - A line with a label and no features is a row of zeros (w7a has many).
//   - Text from '#' to the end of a line is a comment; blank lines are
//     skipped; every trailing '\r' is stripped, so CRLF, mixed endings and a
//     last line without a newline all read the same.
//   - qid:N (SVM-light ranking files) is accepted only directly after the
//     label and is ignored: the features are read and the query grouping is
//     dropped, as scikit-learn's svmlight reader does by default. A qid
//     anywhere else is an error.
//   - Dimension: Options.Dim > 0 fixes it, and an index above it is an
//     error. Options.Dim == 0 infers it, up to Options.MaxDim (see Limits):
//     Load uses the largest index seen;
//     Open makes a complete first pass over the file to find it (and reports
//     the first malformed line from that pass), then streams from the start.
//     Give Dim to stream a large file in one pass, or to give a test file the
//     training file's dimension.
//
// # CSV
//
//   - Delimiter (Options.Comma = 0): the most frequent of ',', ';' and tab
//     (outside quotes) on the first row; if none occurs, runs of blanks.
//     Blanks around fields are trimmed, so cod-rna's ", " works.
//   - Fields may be quoted with '"' ("" is an escaped quote); a quoted field
//     may not span lines.
//   - Header (Options.Header = HeaderAuto): if the first non-blank line starts
//     with '#' and, with the '#' removed, has as many fields as the first data
//     row, all of them non-numeric, it is the header (CASP.csv's
//     `# "RMSD","F1",...`). Otherwise the first row is the header if none of
//     its fields is a number, data if none is text, and an error ("cannot
//     tell") if it mixes the two: a data row with one bad value must not be
//     swallowed silently as a header. Empty and "?" fields count as neither.
//     Later lines starting with '#' are comments, and blank lines are skipped.
//   - Label column (Options.Label): required, there is no default. The shared
//     files put it first (svmguide3, cod-rna, CASP), last (spambase, the
//     ARFF-derived files) or in the middle (parkinsons), so a default of
//     "last" would silently train svmguide3 on its label. Give an index ("0"
//     first, "-1" last, negative counts from the end) or a header name.
//     Preset knows the right options for every shared file.
//   - Options.Drop lists columns (names or indices) to ignore.
//   - Every row must have as many fields as the header (or the first row).
//   - Values are parsed with strconv.ParseFloat, so 7.168048E-05 and
//     3.38e-005 work. In a numeric file an empty field, "?", a non-number,
//     NaN or ±Inf is a *ParseError naming the file, line, column (index
//     and name) and text — for the streaming Reader always; Load instead
//     reads such a file as named features (next section) when the row is
//     otherwise well formed.
//
// # Named features (CSV with strings or missing cells; JSON lines)
//
// Load reads a CSV file as named features when a feature cell is not a
// number (a categorical value, e.g. "Paris") or is missing, or when
// Options.Named asks: it reads the file again, and every row becomes
// []codec.Field named by the header (by the column index without one):
//
//   - a cell that parses as a finite number is a number (FieldNumber);
//   - an empty cell, "?", "NA", "N/A", "NaN", "null" or "None" (any case),
//     and a number that is ±Inf or out of float64 range, is missing
//     (FieldMissing: the encoder imputes it, with a missing indicator);
//   - any other text is a categorical value (FieldString), at most 256
//     bytes (codec.DefaultMaxNameBytes, as the runtime: a longer one is a
//     *ParseError), as are names.
//
// A numeric file without such cells is read exactly as before (same rows,
// Named nil). The label column is read as in a numeric file (numbers, or
// class names with Options.ClassNames); a missing label is an error.
//
// JSON lines (FormatJSONL: extension .jsonl or .ndjson, or a first data
// line that is a JSON object) hold one event per line in the runtime's
// schema (codec.Decoder.DecodeEventJSON): named ("v": 3, "f"), dense ("x")
// or sparse ("xi"/"xv") features, and a label "y" on every line (a string
// label needs Options.ClassNames; bools are 1/0). Named events make a named
// dataset, as the same rows in a CSV file do (equal records, equal rows);
// dense and sparse ones a numeric dataset of dimension Options.Dim or the
// longest x / largest index + 1. A file mixing named and unnamed events, or
// holding a feedback event or an unlabelled one, is refused.
//
// A named dataset keeps the records (Dataset.Named) and the configuration
// of the features.Encoder that turns them into the models' vectors:
// features.Config{Dim: D, MaxValuesPerName: Options.MaxValuesPerName}, the
// runtime's default policy (impute, no missing category). D is Options.Dim
// if set, else NamedDim: per name one coordinate for numbers, one per
// distinct string value up to the cap (64 by default, plus "<other>"
// beyond), and one missing indicator if the name is ever missing or absent
// — an upper bound of what an encoder allocates in any order, so no field
// is dropped whatever the permutation. X holds the records encoded in file
// order by one fresh encoder (what a stream of the file in order gives);
// package eval encodes each presented permutation again with a fresh
// encoder, as the runtime encodes a stream. The records count against
// MaxDenseBytes (about 48 bytes a field) besides the dense rows. Named
// files are read whole (Load); Open refuses them.
//
// # Limits
//
// A file is untrusted input: what it can make the readers allocate is
// bounded by Options' limits (0 selects the default), each reported as a
// *ParseError at the file and line that crosses it:
//
//   - MaxDim (DefaultMaxDim, 2^20): with Dim == 0, a LIBSVM feature index
//     above it, or a CSV row with more feature columns, is an error, found
//     digit by digit before the index is used. Without it, the 15-byte line
//     "1 2147483647:1" would size every row at 16 GiB. A file that really
//     is wider reads with Dim set (okstream --dim), which replaces MaxDim;
//     Dim itself is at most MaxIndex (2^31−1).
//   - MaxLine (DefaultMaxLine, 16 MiB): the longest line; the line buffer
//     grows by doubling up to it.
//   - MaxDenseBytes (DefaultMaxDenseBytes, 2 GiB; okstream
//     --max-dense-mib): Load refuses a file whose rows × Dim × 8 bytes
//     exceed it, at the row that crosses it and before the dense rows are
//     allocated; the message names the line that set an inferred dimension
//     and says to give --dim. Open refuses a Dim whose single row exceeds it.
//
// Beyond the dense rows, Load holds the parsed values (about 12 bytes per
// LIBSVM feature, 8 per CSV value) and the readers a few times the longest
// line; error messages quote at most 40 bytes of a line.
//
// # Errors
//
// Malformed input is reported as a *ParseError with the file, the 1-based
// line and, for CSV, the column, e.g.
//
//	german.numer:17: feature index 3 after 5 (indices must increase)
//	parkinsons_updrs.data:9: column 7 "Jitter(Abs)": bad number "abc"
//
// # Labels, scaling, permutations
//
// Y holds the labels exactly as parsed. BinaryLabels maps them to ±1 for
// classification. FitMinMax / ScaleFeatures / ScaleTargets implement the
// per-column min–max scaling the papers use (see Scaler for constant columns
// and clipping), and ParseScale reads the command-line vocabulary for it.
// Permutation gives run r of seed s the same permutation on every machine.
package dataset
