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
  // Escapes what a terminal or a strict parser would trip over: C0 controls, DEL and the C1
  // controls (U+0080..U+009F, e.g. CSI) as \u escapes, and bytes that are not UTF-8 as U+FFFD
  // (names come from the model and are arbitrary bytes; JSON must be UTF-8).
  void Quote(std::string_view s) {
    out_ += '"';
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      switch (c) {
        case '"': out_ += "\\\""; continue;
        case '\\': out_ += "\\\\"; continue;
        case '\n': out_ += "\\n"; continue;
        case '\r': out_ += "\\r"; continue;
        case '\t': out_ += "\\t"; continue;
        default: break;
      }
      if (c < 0x20 || c == 0x7f) {
        Escape(c);
        continue;
      }
      if (c < 0x80) {
        out_ += static_cast<char>(c);
        continue;
      }
      const size_t n = Utf8Length(s.substr(i));
      if (n == 0) {
        out_ += "\\ufffd";
        continue;
      }
      if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
        Escape(static_cast<unsigned char>(s[i + 1]));
      } else {
        out_.append(s.data() + i, n);
      }
      i += n - 1;
    }
    out_ += '"';
  }
  void Escape(unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
    out_ += buf;
  }
  // Bytes of the well-formed UTF-8 sequence at the start of `s` (no overlong forms, no
  // surrogates, at most U+10FFFF), 0 when it is not one.
  static size_t Utf8Length(std::string_view s) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(0);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return 0;
    }
    if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
    for (size_t k = 2; k < n; ++k) {
      if (b(k) < 0x80 || b(k) > 0xbf) return 0;
    }
    return n;
  }

  int indent_;
  std::string out_;
  std::vector<bool> depth_;   // per open container: still empty?
  std::vector<bool> inline_;  // per open container: printed on one line?
  bool after_key_ = false;
};

}  // namespace onnx_bcast::passes
