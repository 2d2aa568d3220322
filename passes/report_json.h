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

/// Writes a large document as it is produced, with the bytes DumpJson would give the whole:
/// its members are given one by one, and an array member can be filled element by element
/// (each element's DOM built, written and dropped), so the whole document never lives as a
/// DOM. Members must be given in the order DumpJson would write them.
class JsonStreamWriter {
 public:
  explicit JsonStreamWriter(std::string* out) : out_(out) {}
  /// A top-level member.
  void Member(std::string_view key, const Json& value);
  /// Opens a top-level array member whose elements are objects or arrays (never all scalars:
  /// DumpJson keeps those on one line).
  void BeginArray(std::string_view key);
  void Element(const Json& value);
  void EndArray();
  /// Closes the document (trailing newline).
  void End();

 private:
  void Key(std::string_view key);
  std::string* out_;
  bool any_member_ = false;
  bool any_element_ = false;
};

/// Parses a whole document; InvalidArgument naming the byte offset on malformed input.
absl::StatusOr<Json> ParseJson(std::string_view text);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_REPORT_JSON_H_
