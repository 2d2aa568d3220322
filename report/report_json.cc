#include "report/report_json.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace onnx_bcast::report {
namespace {

// nlohmann escapes C0 controls but writes DEL and the C1 controls (U+0080..U+009F, e.g. CSI,
// which some terminals obey) as they are; those are escaped here, after the dump, where a
// C2 80..9F pair can only be such a character (the dump is valid UTF-8).
void DumpedScalar(const Json& value, std::string* out) {
  const std::string text =
      value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  if (!value.is_string()) {
    out->append(text);
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
      out->push_back(static_cast<char>(c));
    } else {
      out->append("\\u00");
      out->push_back(kHex[code >> 4]);
      out->push_back(kHex[code & 15]);
    }
  }
}

// Printable ASCII other than '"' and '\\' is written as it is by every rule above.
bool PlainAscii(std::string_view text) {
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

// The common scalars written directly, the rest by nlohmann's dump: the same bytes, without a
// string allocated per value (at 100k nodes the report has millions of them).
void StringScalar(std::string_view text, std::string* out) {
  if (PlainAscii(text)) {
    out->push_back('"');
    out->append(text);
    out->push_back('"');
  } else {
    DumpedScalar(Json(text), out);
  }
}

void Scalar(const Json& value, std::string* out) {
  switch (value.type()) {
    case Json::value_t::string:
      StringScalar(value.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::number_integer:
      absl::StrAppend(out, value.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      absl::StrAppend(out, value.get<uint64_t>());
      return;
    case Json::value_t::boolean:
      out->append(value.get<bool>() ? "true" : "false");
      return;
    case Json::value_t::null:
      out->append("null");
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

void Newline(int depth, std::string* out) {
  out->push_back('\n');
  out->append(static_cast<size_t>(depth) * 2, ' ');
}

// Recursion depth is that of our own documents (a handful of levels), never of input.
void Write(const Json& value, int depth, std::string* out) {
  if (value.is_object()) {
    if (value.empty()) {
      out->append("{}");
      return;
    }
    out->push_back('{');
    bool first = true;
    for (const auto& [key, member] : value.items()) {
      if (!first) out->push_back(',');
      first = false;
      Newline(depth + 1, out);
      StringScalar(key, out);
      out->append(": ");
      Write(member, depth + 1, out);
    }
    Newline(depth, out);
    out->push_back('}');
  } else if (value.is_array()) {
    if (value.empty()) {
      out->append("[]");
      return;
    }
    const bool one_line = AllScalars(value);
    out->push_back('[');
    bool first = true;
    for (const Json& e : value) {
      if (!first) out->append(one_line ? ", " : ",");
      first = false;
      if (!one_line) Newline(depth + 1, out);
      Write(e, depth + 1, out);
    }
    if (!one_line) Newline(depth, out);
    out->push_back(']');
  } else {
    Scalar(value, out);
  }
}

}  // namespace

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
  std::string out;
  Write(document, 0, &out);
  out.push_back('\n');
  return out;
}

void AppendJsonString(std::string_view text, std::string* out) { StringScalar(text, out); }

void JsonObjectWriter::Key(std::string_view key) {
  out_->append(any_member_ ? "," : "{");
  any_member_ = true;
  Newline(depth_ + 1, out_);
  StringScalar(key, out_);
  out_->append(": ");
}

void JsonObjectWriter::String(std::string_view key, std::string_view value) {
  Key(key);
  StringScalar(value, out_);
}

void JsonObjectWriter::Int(std::string_view key, int64_t value) {
  Key(key);
  absl::StrAppend(out_, value);
}

void JsonObjectWriter::Value(std::string_view key, const Json& value) {
  Key(key);
  Write(value, depth_ + 1, out_);
}

std::string* JsonObjectWriter::Raw(std::string_view key) {
  Key(key);
  return out_;
}

void JsonObjectWriter::BeginArray(std::string_view key) {
  Key(key);
  out_->push_back('[');
  any_element_ = false;
}

void JsonObjectWriter::NextElement() {
  if (any_element_) out_->push_back(',');
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
    out_->push_back(']');
    return;
  }
  Newline(depth_ + 1, out_);
  out_->push_back(']');
}

void JsonObjectWriter::End() {
  if (!any_member_) {
    out_->append("{}");
    return;
  }
  Newline(depth_, out_);
  out_->push_back('}');
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
