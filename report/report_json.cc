#include "report/report_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace onnx_bcast::report {
namespace {

// nlohmann escapes C0 controls but writes DEL and the C1 controls (U+0080..U+009F, e.g. CSI,
// which some terminals obey) as they are; those are escaped here, after the dump, where a
// C2 80..9F pair can only be such a character (the dump is valid UTF-8).
void DumpedScalar(const Json& value, JsonText* out) {
  const std::string text =
      value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  if (!value.is_string()) {
    out->Append(text);
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    unsigned code = 0x100;  // none
    if (c == 0x7f) {
      code = c;
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      code = static_cast<unsigned char>(text[++i]);
    }
    if (code == 0x100) {
      out->Append(static_cast<char>(c));
    } else {
      char* at = out->Extend(6);
      std::memcpy(at, "\\u00", 4);
      at[4] = kHex[code >> 4];
      at[5] = kHex[code & 15];
    }
  }
}

bool PlainByte(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

// Printable ASCII other than '"' and '\\' is written as it is by every rule above. Eight bytes
// are tested at a time (names and dims are most of a 29 MB check report): a word passes when
// no byte is below 0x20, at or above 0x7f, '"' or '\\'. The tests may flag a plain word (a
// borrow or carry from a flagged byte); such a word is tested byte by byte.
bool PlainAscii(std::string_view text) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t w) { return (w - kOnes) & ~w & kHigh; };
  const char* p = text.data();
  size_t n = text.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t below_space = (w - 0x20 * kOnes) & ~w & kHigh;
    const uint64_t del_or_high = ((w + kOnes) | w) & kHigh;
    const uint64_t quote_or_backslash = has_zero(w ^ ('"' * kOnes)) | has_zero(w ^ ('\\' * kOnes));
    if ((below_space | del_or_high | quote_or_backslash) != 0) {
      for (int k = 0; k < 8; ++k) {
        if (!PlainByte(static_cast<unsigned char>(p[k]))) return false;
      }
    }
  }
  for (; n > 0; ++p, --n) {
    if (!PlainByte(static_cast<unsigned char>(*p))) return false;
  }
  return true;
}

// The common scalars written directly, the rest by nlohmann's dump: the same bytes, without a
// string allocated per value (at 100k nodes the report has millions of them).
void StringScalar(std::string_view text, JsonText* out) {
  if (PlainAscii(text)) {
    char* at = out->Extend(text.size() + 2);
    at[0] = '"';
    if (!text.empty()) std::memcpy(at + 1, text.data(), text.size());
    at[text.size() + 1] = '"';
  } else {
    DumpedScalar(Json(text), out);
  }
}

void Scalar(const Json& value, JsonText* out) {
  switch (value.type()) {
    case Json::value_t::string:
      StringScalar(value.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::number_integer:
      out->AppendInt(value.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      out->AppendUnsigned(value.get<uint64_t>());
      return;
    case Json::value_t::boolean:
      out->Append(value.get<bool>() ? std::string_view("true") : std::string_view("false"));
      return;
    case Json::value_t::null:
      out->Append("null");
      return;
    default:
      DumpedScalar(value, out);
  }
}

bool AllScalars(const Json& array) {
  for (const Json& e : array) {
    if (e.is_structured()) return false;
  }
  return true;
}

// A newline and the indentation of `depth`, copied from one constant line.
void Newline(int depth, JsonText* out) {
  static constexpr std::string_view kIndented =
      "\n                                                                ";
  const size_t size = 1 + static_cast<size_t>(depth) * 2;
  if (size <= kIndented.size()) {
    out->Append(kIndented.substr(0, size));
    return;
  }
  out->Append('\n');
  std::memset(out->Extend(size - 1), ' ', size - 1);
}

// Recursion depth is that of our own documents (a handful of levels), never of input.
void Write(const Json& value, int depth, JsonText* out) {
  if (value.is_object()) {
    if (value.empty()) {
      out->Append("{}");
      return;
    }
    out->Append('{');
    bool first = true;
    for (const auto& [key, member] : value.items()) {
      if (!first) out->Append(',');
      first = false;
      Newline(depth + 1, out);
      StringScalar(key, out);
      out->Append(": ");
      Write(member, depth + 1, out);
    }
    Newline(depth, out);
    out->Append('}');
  } else if (value.is_array()) {
    if (value.empty()) {
      out->Append("[]");
      return;
    }
    const bool one_line = AllScalars(value);
    out->Append('[');
    bool first = true;
    for (const Json& e : value) {
      if (!first) out->Append(one_line ? std::string_view(", ") : std::string_view(","));
      first = false;
      if (!one_line) Newline(depth + 1, out);
      Write(e, depth + 1, out);
    }
    if (!one_line) Newline(depth, out);
    out->Append(']');
  } else {
    Scalar(value, out);
  }
}

}  // namespace

namespace {

// 20 characters hold any int64_t ("-9223372036854775808") and uint64_t.
template <typename Integer>
void AppendDecimal(Integer value, JsonText* out) {
  char digits[20];
  const char* end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  out->Append(std::string_view(digits, static_cast<size_t>(end - digits)));
}

}  // namespace

void JsonText::AppendInt(int64_t value) { AppendDecimal(value, this); }

void JsonText::AppendUnsigned(uint64_t value) { AppendDecimal(value, this); }

void JsonText::Grow(size_t count) {
  // Geometric, as std::string grows; the new room is zero-filled once, by resize.
  buffer_.resize(std::max(buffer_.size() * 2, std::max(size_ + count, size_t{256})));
}

std::string JsonText::Release() && {
  buffer_.resize(size_);
  size_ = 0;
  return std::move(buffer_);
}

absl::Status FlushJsonText(size_t at_least, JsonText* text, JsonSink sink) {
  if (text->size() < at_least) return absl::OkStatus();
  absl::Status s = sink(text->view());
  text->clear();
  return s;
}

Json JsonNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

Json JsonStringOrNull(std::string_view value) {
  if (value.empty()) return nullptr;
  return std::string(value);
}

std::string DumpJson(const Json& document) {
  JsonText out;
  Write(document, 0, &out);
  out.Append('\n');
  return std::move(out).Release();
}

void AppendJsonString(std::string_view text, JsonText* out) { StringScalar(text, out); }

void JsonObjectWriter::Key(std::string_view key) {
  out_->Append(any_member_ ? ',' : '{');
  any_member_ = true;
  Newline(depth_ + 1, out_);
  StringScalar(key, out_);
  out_->Append(": ");
}

void JsonObjectWriter::String(std::string_view key, std::string_view value) {
  Key(key);
  StringScalar(value, out_);
}

void JsonObjectWriter::Int(std::string_view key, int64_t value) {
  Key(key);
  out_->AppendInt(value);
}

void JsonObjectWriter::Value(std::string_view key, const Json& value) {
  Key(key);
  Write(value, depth_ + 1, out_);
}

JsonText* JsonObjectWriter::Raw(std::string_view key) {
  Key(key);
  return out_;
}

void JsonObjectWriter::BeginArray(std::string_view key) {
  Key(key);
  out_->Append('[');
  any_element_ = false;
}

void JsonObjectWriter::NextElement() {
  if (any_element_) out_->Append(',');
  any_element_ = true;
  Newline(depth_ + 2, out_);
}

JsonObjectWriter JsonObjectWriter::ObjectElement() {
  NextElement();
  return JsonObjectWriter(out_, depth_ + 2);
}

void JsonObjectWriter::Element(const Json& value) {
  NextElement();
  Write(value, depth_ + 2, out_);
}

void JsonObjectWriter::EndArray() {
  if (!any_element_) {
    out_->Append(']');
    return;
  }
  Newline(depth_ + 1, out_);
  out_->Append(']');
}

void JsonObjectWriter::End() {
  if (!any_member_) {
    out_->Append("{}");
    return;
  }
  Newline(depth_, out_);
  out_->Append('}');
}

absl::StatusOr<Json> ParseJson(std::string_view text) {
  // nlohmann's parser and destructor are iterative: hostile nesting cannot exhaust the stack.
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // Parse again with exceptions for the position; only on the error path.
    try {
      const Json again = Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
      return absl::InvalidArgumentError(absl::StrCat("malformed JSON at byte ", e.byte));
    }
    return absl::InvalidArgumentError("malformed JSON");
  }
  return doc;
}

}  // namespace onnx_bcast::report
