// Dim expressions from text (Expr::Parse, the printed form of Expr::ToString): a
// recursive-descent parser over the public Expr builders, so a parsed expression is canonical
// like any other.
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "broadcast/expr.h"
#include "support/status_macros.h"

namespace onnx_bcast::broadcast {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<Expr> Run() {
    absl::StatusOr<Expr> e = ParseSum();
    if (!e.ok()) return e;
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text");
    return e;
  }

 private:
  absl::Status Fail(std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("bad expression \"", std::string(text_),
                                                   "\" at offset ", pos_, ": ", std::string(what)));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static bool IdentChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (c >= '0' && c <= '9') ||
           c == '.' || c == ':';
  }
  // Peeks an identifier without consuming it.
  std::string_view PeekIdent() {
    SkipSpace();
    size_t end = pos_;
    if (end < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
      while (end < text_.size() && IdentChar(text_[end])) ++end;
    }
    return text_.substr(pos_, end - pos_);
  }

  absl::StatusOr<Expr> ParseSum() {
    if (++depth_ > 200) return Fail("nesting too deep");
    BCAST_ASSIGN_OR_RETURN(Expr e, ParseProduct());
    while (true) {
      if (Eat('+')) {
        BCAST_ASSIGN_OR_RETURN(Expr r, ParseProduct());
        e = e + r;
      } else if (Eat('-')) {
        BCAST_ASSIGN_OR_RETURN(Expr r, ParseProduct());
        e = e - r;
      } else {
        break;
      }
    }
    --depth_;
    return e;
  }

  absl::StatusOr<Expr> ParseProduct() {
    BCAST_ASSIGN_OR_RETURN(Expr e, ParseUnary());
    while (true) {
      if (Eat('*')) {
        BCAST_ASSIGN_OR_RETURN(Expr r, ParseUnary());
        e = e * r;
      } else if (PeekIdent() == "mod") {
        pos_ += 3;
        BCAST_ASSIGN_OR_RETURN(Expr r, ParseUnary());
        std::optional<Expr> m = Expr::Mod(e, r);
        if (!m) return Fail("mod needs a positive constant divisor");
        e = *m;
      } else {
        break;
      }
    }
    return e;
  }

  absl::StatusOr<Expr> ParseUnary() {
    if (Eat('-')) {
      absl::StatusOr<Expr> e = ParseUnary();
      if (!e.ok()) return e;
      return -*e;
    }
    return ParsePrimary();
  }

  absl::StatusOr<Expr> ParsePrimary() {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("expression expected");
    const char c = text_[pos_];
    if (c >= '0' && c <= '9') {
      int64_t v = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v)) {
          return Fail("integer overflows int64");
        }
        ++pos_;
      }
      return Expr::Const(v);
    }
    if (c == '(') {
      ++pos_;
      absl::StatusOr<Expr> e = ParseSum();
      if (!e.ok()) return e;
      if (!Eat(')')) return Fail("')' expected");
      return e;
    }
    if (c == '`') {
      ++pos_;
      std::string name;
      while (pos_ < text_.size() && text_[pos_] != '`') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        name.push_back(text_[pos_++]);
      }
      if (pos_ >= text_.size()) return Fail("unterminated `name`");
      ++pos_;
      if (name.empty()) return Fail("empty symbol name");
      return Expr::Symbol(name);
    }
    const std::string_view ident = PeekIdent();
    if (ident.empty()) return Fail("expression expected");
    pos_ += ident.size();
    const size_t save = pos_;
    if ((ident == "floor" || ident == "ceil") && Eat('(')) {
      absl::StatusOr<Expr> num = ParseSum();
      if (!num.ok()) return num;
      if (!Eat('/')) return Fail("'/' expected");
      absl::StatusOr<Expr> den = ParseSum();
      if (!den.ok()) return den;
      if (!Eat(')')) return Fail("')' expected");
      std::optional<Expr> r =
          ident == "floor" ? Expr::FloorDiv(*num, *den) : Expr::CeilDiv(*num, *den);
      if (!r) return Fail("division needs a positive constant divisor");
      return *r;
    }
    if ((ident == "min" || ident == "max") && Eat('(')) {
      absl::StatusOr<Expr> first = ParseSum();
      if (!first.ok()) return first;
      Expr e = *first;
      while (Eat(',')) {
        absl::StatusOr<Expr> r = ParseSum();
        if (!r.ok()) return r;
        e = ident == "min" ? Expr::Min(e, *r) : Expr::Max(e, *r);
      }
      if (!Eat(')')) return Fail("')' expected");
      return e;
    }
    pos_ = save;
    if (ident == "floor" || ident == "ceil" || ident == "min" || ident == "max" || ident == "mod") {
      return Fail(absl::StrCat("'", std::string(ident), "' is a keyword; quote the symbol"));
    }
    return Expr::Symbol(ident);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<Expr> Expr::Parse(std::string_view text) { return Parser(text).Run(); }

}  // namespace onnx_bcast::broadcast
