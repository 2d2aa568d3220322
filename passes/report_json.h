// The one JSON layer of every report (check --json, opt --report, verify --json, the C++ API's
// `json` fields and the Python dicts): nlohmann::ordered_json documents, so keys keep the order
// they are written in and output is deterministic. Every document starts with
// "schema_version" (docs/report-schema.md).
#ifndef ONNX_BCAST_PASSES_REPORT_JSON_H_
#define ONNX_BCAST_PASSES_REPORT_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace onnx_bcast::passes {

using Json = nlohmann::ordered_json;

/// Bumped when a key is renamed or removed, or its meaning changes; adding keys keeps it.
inline constexpr int kReportSchemaVersion = 1;

/// A number, or "nan"/"inf"/"-inf" as a string: JSON has no non-finite numbers, and nlohmann
/// would write them as null, which reads as "absent".
Json JsonNumber(double value);

/// An empty string as null (an absent output path, target, error...).
Json JsonStringOrNull(std::string_view value);

/// The document with 2-space indentation, arrays of scalars (shapes, symbol lists) on one line,
/// and a trailing newline. Names come from the model and may hold terminal controls or any
/// bytes: every control (C0, DEL, C1) is escaped as \u00XX and bytes that are not UTF-8 are
/// replaced by U+FFFD; other characters stay as they are (conditions read "N ∈ {1, 5}").
/// (nlohmann's own dump cannot keep short arrays on one line, so the layout is ours; every
/// scalar is still written by nlohmann.)
std::string DumpJson(const Json& document);

/// Parses a whole document; InvalidArgument naming the byte offset on malformed input.
absl::StatusOr<Json> ParseJson(std::string_view text);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_REPORT_JSON_H_
