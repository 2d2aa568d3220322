// The one JSON layer of every report (check --json, opt --report, verify --json, the C++ API's
// `json` fields and the Python dicts): nlohmann::ordered_json documents, so keys keep the order
// they are written in and output is deterministic. Every document starts with
// "schema_version" (docs/report-schema.md).
#ifndef ONNX_BCAST_REPORT_REPORT_JSON_H_
#define ONNX_BCAST_REPORT_REPORT_JSON_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace onnx_bcast::report {

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
/// (nlohmann's own dump cannot keep short arrays on one line, so the layout is ours; strings
/// that are printable ASCII and integers are written directly, every other scalar by nlohmann.)
std::string DumpJson(const Json& document);

/// The text the streaming writers below append to. A report written by the hundred thousand
/// records is millions of short pieces (check --json at 100k nodes: 29 MB in about 1.5M
/// pieces); std::string's append and push_back are out-of-line calls with their own checks,
/// and cost more than the bytes, so pieces are copied through a cursor into spare room that is
/// grown geometrically. The bytes live in a std::string, handed over without a copy.
class JsonText {
 public:
  JsonText() = default;
  explicit JsonText(size_t capacity) { buffer_.resize(capacity); }
  void Append(std::string_view piece) {
    if (!piece.empty()) std::memcpy(Extend(piece.size()), piece.data(), piece.size());
  }
  void Append(char c) { *Extend(1) = c; }
  /// `count` bytes at the end, for the caller to fill.
  char* Extend(size_t count) {
    if (buffer_.size() - size_ < count) Grow(count);
    char* at = buffer_.data() + size_;
    size_ += count;
    return at;
  }
  void AppendInt(int64_t value);
  void AppendUnsigned(uint64_t value);
  std::string_view view() const { return {buffer_.data(), size_}; }
  size_t size() const { return size_; }
  /// Empties the text and keeps its room.
  void clear() { size_ = 0; }
  /// The text, leaving this empty.
  std::string Release() &&;

 private:
  void Grow(size_t count);
  std::string buffer_;  // size() is the room; size_ bytes of it are the text
  size_t size_ = 0;
};

/// Receives a report's bytes piece by piece, in order; an error stops the writing.
using JsonSink = absl::FunctionRef<absl::Status(std::string_view)>;

/// The pieces streamed reports are handed on in: about 64 KiB, flushed between records.
inline constexpr size_t kJsonPiece = 64 << 10;

/// Hands `text` to `sink` and empties it once it holds `at_least` bytes (the writers only
/// append, so the text can be emptied between records); the sink's error.
absl::Status FlushJsonText(size_t at_least, JsonText* text, JsonSink sink);

/// Appends `text` as a JSON string, escaped as DumpJson escapes it.
void AppendJsonString(std::string_view text, JsonText* out);

/// One object written member by member in DumpJson's layout at a given depth, without a DOM:
/// for records written by the hundred thousand (check --json's nodes), where building each as
/// a DOM cost more than the analysis. Members must come in the order DumpJson would write them.
class JsonObjectWriter {
 public:
  /// Opens the object at `depth` (0 for a document; an element of a top-level array is at 2).
  JsonObjectWriter(JsonText* out, int depth) : out_(out), depth_(depth) {}
  void String(std::string_view key, std::string_view value);
  void Int(std::string_view key, int64_t value);
  /// Any value, through DumpJson's layout.
  void Value(std::string_view key, const Json& value);
  /// Writes the key; the caller appends one scalar, `null`, or a one-line scalar array.
  JsonText* Raw(std::string_view key);
  /// An array member whose elements are objects: each is a writer of its own, ended before the
  /// next begins.
  void BeginArray(std::string_view key);
  JsonObjectWriter ObjectElement();
  /// An element of any kind (objects or arrays: an array of scalars belongs on one line, which
  /// a member's Value gives).
  void Element(const Json& value);
  void EndArray();
  /// Closes the object ({} when it has no member).
  void End();

 private:
  void Key(std::string_view key);
  void NextElement();
  JsonText* out_;
  int depth_;
  bool any_member_ = false;
  bool any_element_ = false;
};

/// Writes a large document as it is produced, with the bytes DumpJson would give the whole:
/// its members are given one by one, and an array member can be filled element by element
/// (each element's DOM built, written and dropped, or written member by member), so the whole
/// document never lives as a DOM. Members must be given in the order DumpJson would write them.
class JsonStreamWriter {
 public:
  explicit JsonStreamWriter(JsonText* out) : out_(out), root_(out, 0) {}
  /// A top-level member.
  void Member(std::string_view key, const Json& value) { root_.Value(key, value); }
  /// Opens a top-level array member whose elements are objects or arrays (never all scalars:
  /// DumpJson keeps those on one line).
  void BeginArray(std::string_view key) { root_.BeginArray(key); }
  void Element(const Json& value) { root_.Element(value); }
  /// An element written without a DOM: the writer's End() closes it.
  JsonObjectWriter ObjectElement() { return root_.ObjectElement(); }
  void EndArray() { root_.EndArray(); }
  /// Closes the document (trailing newline).
  void End() {
    root_.End();
    out_->Append('\n');
  }

 private:
  JsonText* out_;
  JsonObjectWriter root_;
};

/// Parses a whole document; InvalidArgument naming the byte offset on malformed input.
absl::StatusOr<Json> ParseJson(std::string_view text);

}  // namespace onnx_bcast::report

#endif  // ONNX_BCAST_REPORT_REPORT_JSON_H_
