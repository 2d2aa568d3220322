// A small JSON reader for the project's own reports (opt --report, check --json), so that
// verify can attribute a divergence to the rewrite that caused it and tests can read reports.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace onnx_bcast::passes {

/// A parsed JSON value. Numbers are kept as doubles.
struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;  ///< in document order

  // Defined in the .cc: clang with libstdc++ refuses to instantiate pair<string, JsonValue>
  // for implicit members while JsonValue is still incomplete.
  JsonValue();
  JsonValue(const JsonValue&);
  JsonValue(JsonValue&&) noexcept;
  JsonValue& operator=(const JsonValue&);
  JsonValue& operator=(JsonValue&&) noexcept;
  ~JsonValue();

  /// Member `key` of an object, or null when absent or not an object.
  const JsonValue* Get(std::string_view key) const;
  /// Member `key` as a string ("" when absent or not a string).
  std::string GetString(std::string_view key) const;
};

/// Parses a whole document; InvalidArgument with the byte offset on malformed input. Nesting is
/// limited to 200 levels.
absl::StatusOr<JsonValue> ParseJson(std::string_view text);

}  // namespace onnx_bcast::passes
