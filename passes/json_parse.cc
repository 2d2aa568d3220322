// A small recursive-descent JSON reader (see json_parse.h).
#include "passes/json_parse.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace onnx_bcast::passes {

JsonValue::JsonValue() = default;
JsonValue::JsonValue(const JsonValue&) = default;
JsonValue::JsonValue(JsonValue&&) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue&) = default;
JsonValue& JsonValue::operator=(JsonValue&&) noexcept = default;
JsonValue::~JsonValue() = default;

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Document() {
    JsonValue v;
    if (absl::Status s = Value(&v, 0); !s.ok()) return s;
    Skip();
    if (pos_ != text_.size()) return Error("trailing characters");
    return v;
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", what, " at byte ", pos_));
  }
  void Skip() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  absl::Status Value(JsonValue* v, int depth) {
    if (depth > 200) return Error("nested too deeply");
    Skip();
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v->type = JsonValue::Type::kString;
      return String(&v->string);
    }
    if (Consume("true")) {
      v->type = JsonValue::Type::kBool;
      v->boolean = true;
      return absl::OkStatus();
    }
    if (Consume("false")) {
      v->type = JsonValue::Type::kBool;
      return absl::OkStatus();
    }
    if (Consume("null")) return absl::OkStatus();
    const char* begin = text_.data() + pos_;
    char* end = nullptr;
    const std::string number(begin, std::min<size_t>(text_.size() - pos_, 64));
    v->number = std::strtod(number.c_str(), &end);
    if (end == number.c_str()) return Error("unexpected character");
    v->type = JsonValue::Type::kNumber;
    pos_ += static_cast<size_t>(end - number.c_str());
    return absl::OkStatus();
  }
  absl::Status String(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return Error("bad \\u escape");
          const unsigned code = std::strtoul(std::string(text_.substr(pos_, 4)).c_str(), nullptr, 16);
          pos_ += 4;
          // UTF-8 encode (surrogate pairs are not produced by our writers).
          if (code < 0x80) {
            out->push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (code >> 6)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else {
            out->push_back(static_cast<char>(0xE0 | (code >> 12)));
            out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default: out->push_back(e);
      }
    }
    return Error("unterminated string");
  }
  absl::Status Array(JsonValue* v, int depth) {
    v->type = JsonValue::Type::kArray;
    ++pos_;
    Skip();
    if (Consume("]")) return absl::OkStatus();
    for (;;) {
      v->array.emplace_back();
      if (absl::Status s = Value(&v->array.back(), depth + 1); !s.ok()) return s;
      Skip();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }
  absl::Status Object(JsonValue* v, int depth) {
    v->type = JsonValue::Type::kObject;
    ++pos_;
    Skip();
    if (Consume("}")) return absl::OkStatus();
    for (;;) {
      Skip();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected a key");
      std::string key;
      if (absl::Status s = String(&key); !s.ok()) return s;
      Skip();
      if (!Consume(":")) return Error("expected ':'");
      v->object.emplace_back(std::move(key), JsonValue());
      if (absl::Status s = Value(&v->object.back().second, depth + 1); !s.ok()) return s;
      Skip();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::Get(std::string_view key) const {
  if (type != Type::kObject) return nullptr;
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string JsonValue::GetString(std::string_view key) const {
  const JsonValue* v = Get(key);
  return v != nullptr && v->type == Type::kString ? v->string : "";
}

absl::StatusOr<JsonValue> ParseJson(std::string_view text) { return Parser(text).Document(); }

}  // namespace onnx_bcast::passes
