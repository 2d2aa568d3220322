// A minimal streaming JSON writer for reports (check --json, opt --report). Output is
// deterministic: keys appear in the order written.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace onnx_bcast::passes {

/// Builds a JSON document with correct commas and string escaping.
class JsonWriter {
 public:
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  /// An array printed on one line (for short lists of scalars such as shapes).
  JsonWriter& BeginInlineArray() {
    Open('[');
    inline_.back() = true;
    return *this;
  }
  JsonWriter& EndArray() { return Close(']'); }

  /// Writes the key of the next member of the current object.
  JsonWriter& Key(std::string_view key) {
    Separate();
    Quote(key);
    out_ += indent_ > 0 ? ": " : ":";
    after_key_ = true;
    return *this;
  }
  JsonWriter& String(std::string_view value) {
    Separate();
    Quote(value);
    return *this;
  }
  JsonWriter& Int(int64_t value) {
    Separate();
    out_ += std::to_string(value);
    return *this;
  }
  JsonWriter& Double(double value) {
    Separate();
    if (!std::isfinite(value)) {
      out_ += std::isnan(value) ? "\"nan\"" : (value > 0 ? "\"inf\"" : "\"-inf\"");
      return *this;
    }
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.9g", value);
    out_ += buf;
    return *this;
  }
  JsonWriter& Bool(bool value) {
    Separate();
    out_ += value ? "true" : "false";
    return *this;
  }
  JsonWriter& Null() {
    Separate();
    out_ += "null";
    return *this;
  }
  /// Key + String, Key + Int, ... in one call.
  JsonWriter& Member(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonWriter& Member(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonWriter& Member(std::string_view key, int64_t value) { return Key(key).Int(value); }
  JsonWriter& Member(std::string_view key, int value) { return Key(key).Int(value); }
  JsonWriter& Member(std::string_view key, bool value) { return Key(key).Bool(value); }

  /// The document so far, with a trailing newline once complete.
  std::string str() const { return depth_.empty() ? out_ + "\n" : out_; }

 private:
  JsonWriter& Open(char c) {
    Separate();
    out_ += c;
    depth_.push_back(true);
    inline_.push_back(false);
    return *this;
  }
  JsonWriter& Close(char c) {
    const bool empty = depth_.back();
    const bool was_inline = inline_.back();
    depth_.pop_back();
    inline_.pop_back();
    if (!empty && !was_inline) Newline();
    out_ += c;
    return *this;
  }
  void Separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (depth_.empty()) return;
    const bool first = depth_.back();
    if (!first) out_ += ',';
    depth_.back() = false;
    if (inline_.back()) {
      if (!first) out_ += ' ';
      return;
    }
    Newline();
  }
  void Newline() {
    if (indent_ <= 0) return;
    out_ += '\n';
    out_.append(depth_.size() * indent_, ' ');
  }
  void Quote(std::string_view s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }

  int indent_;
  std::string out_;
  std::vector<bool> depth_;   // per open container: still empty?
  std::vector<bool> inline_;  // per open container: printed on one line?
  bool after_key_ = false;
};

}  // namespace onnx_bcast::passes
