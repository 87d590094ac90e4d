// Package kuairec reads the KuaiRec 2.0 recommendation logs (Kuaishou;
// Gao et al., "KuaiRec: A Fully-observed Dataset and Insights for
// Evaluating Recommender Systems", CIKM 2022) exactly as published, turns
// them into a labelled event stream with versioned features, and generates
// synthetic samples in byte-for-byte the same format.
//
// The reference for the files is KuaiRec 2.0's published files and statistics (Gao et al., CIKM 2022);
// the features, the replay order and the synthetic sample are ours
// (docs/algorithms/kuairec-features.md);
// the FORKS paper (§5.3, App. D.2) uses the small matrix's 4,494,578 timed
// rows with the label watch_ratio > 0.75.
//
// # Files (KuaiRec.zip unpacks to "KuaiRec 2.0/data/")
//
//	small_matrix.csv          user_id, video_id, play_duration, video_duration, time, date, timestamp, watch_ratio
//	                          1,411 users × 3,327 videos, 4,676,570 rows; 181,992 untimed (stage-2) rows
//	big_matrix.csv            same columns; 7,176 × 10,728, 12,530,806 rows, with exact duplicates
//	user_features.csv         user_id, user_active_degree, 3 flags, 4 counts with their *_range buckets,
//	                          onehot_feat0 … onehot_feat17 (31 columns)
//	item_categories.csv       video_id, feat (a Python list of tag IDs 0..30)
//	item_daily_features.csv   video_id, date, 11 metadata columns, 45 same-day counters (58 columns)
//	social_network.csv        user_id, friend_list
//	kuairec_caption_category.csv  video_id and 9 caption/category text columns
//
// Locate finds the files in a folder (the unpacked zip's layout or a bare
// data folder) and tells a synthetic sample from the real data by the
// SYNTHETIC.md marker the generator writes beside data/.
//
// # Readers
//
// Each file has a record type (Interaction, User, IDList, DailyRow,
// Caption), a reader and an Append/Write function; the matrices and the
// daily table stream (OpenMatrix, OpenDaily) in memory independent of their
// length. The readers are tolerant of the real files' quirks:
//
//   - the small matrix's date is written as a float ("20200705.0") because
//     of its empty rows; integer dates are accepted too;
//   - untimed rows have empty time, date and timestamp (Interaction.Timed
//     is false); the time column's fraction has its trailing zeros trimmed;
//   - lists are "[8]" or quoted "[27, 9]" / "[27,9]", blanks anywhere;
//   - empty values are NaN (floats) or Missing (integer fields);
//     onehot_feat4/12…17 and collect_* are written as floats ("1.0");
//   - a quoted field may hold commas, quotes, '\r' and '\n'; '\r' ends a
//     line only before '\n'; a quote inside an unquoted field is literal; a
//     UTF-8 byte-order mark is dropped; columns are found by header name;
//   - malformed rows are *dataset.ParseErrors with file, line and column.
//
// The writers reproduce the files byte for byte: numbers as pandas'
// to_csv writes them (Python's repr for floats, AppendPyFloat), minimal CSV
// quoting, and the per-file choices a reader detects (MatrixFormat,
// UserFormat, ListFormat, DailyFormat). A synthetic file parsed and
// re-emitted is identical to the original (tested for all seven files).
//
// # Replay order and labels
//
// LoadEvents reads a matrix into the global replay order: the
// timed rows sorted by (timestamp, user_id, video_id); the untimed rows are
// excluded (they have no time to replay at). The files are stored
// user-major, so this sort is what makes them a stream. Event times are
// round(timestamp·1000) ms; the local day is the Beijing (UTC+8) date of
// the timestamp, not the date column, which disagrees in ~0.1 % of the real
// rows. The label is +1 when watch_ratio > 0.75 (DefaultThreshold,
// configurable), else −1. Event ids are "<user>-<video>", with "#k" for the
// big matrix's repeated pairs, and the key is the user_id.
//
// # Features (kuairec-v1)
//
// Features implements our feature construction (FeatureSchemaVersion "kuairec-v1", d = 86:
// context 4, user 30, tags 31, previous-day video statistics 21; the
// compact profile "kuairec-v1-compact" has d = 44). Everything is fitted on
// the side tables only — quantile bounds, smoothing priors, code
// frequencies — never on the events, so features are stationary and leak
// no labels. Daily statistics are joined on the previous day (falling back
// to the latest earlier row, or zeros plus a missing flag); SameDay joins
// the event's own day instead, which looks ahead (the day's counters
// include later events) and exists only to measure that. Open and
// Stream.Dataset give the events with features and labels as a
// *dataset.Dataset in replay order, which `okstream eval --data
// kuairec:DIR` uses (ParseDataArg).
//
// # Synthetic samples
//
// Generate writes all seven files for a seeded synthetic population (see
// synth.go for the model): users × videos of the small matrix nearly
// complete (blocked authors), 3.9 % untimed rows last in each user's block,
// users active on ~97 % of the days 2020-07-05..09-05 with ~52 events per
// active day, lognormal video lengths (median 9.6 s), play times
// independent of length with user and video effects (P(watch_ratio > 0.75)
// ≈ 0.51, quartiles ≈ 0.47 / 0.77 / 1.11), a big matrix with duplicates
// and no small-matrix pair, and label-free side tables consistent with the
// model. A seed gives the same bytes on every machine. The files are
// labelled synthetic by SYNTHETIC.md, never inside the CSVs (which must
// stay byte-compatible with the real schema).
//
// Sources: KuaiRec's own documentation (KuaiRec README, Statistics_KuaiRec.ipynb,
// loaddata.py, maintainer answers in chongminggao/KuaiRec issues #1 and #2,
// and public EDA notebooks); no code was copied.
package kuairec
