// Dim expressions: the hash-consed pool, canonicalisation, printing, evaluation,
// bounds and the exact one-symbol equality decision (parsing: expr_parse.cc).
//
// Requires: nothing (process-wide pool, created on first use).
// Guarantees: every Expr handed out points to a canonical node; two canonical nodes are equal
// exactly when their pointers are; nodes are never freed; all pool access is under one mutex,
// so the API is thread-safe. Expressions larger than kMaxNodes tree nodes or deeper than
// kMaxDepth, and results whose folded constants overflow int64, are replaced by a fresh opaque
// symbol (see Expr::IsOpaque).
#include "broadcast/expr.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace onnx_bcast::broadcast {

enum class ExprKind : uint8_t {
  kSymbol,
  kProduct,   // args: >= 2 atoms, sorted (repeats allowed)
  kFloorDiv,  // args: {e}; k: divisor > 1
  kMod,       // args: {e}; k: divisor > 1
  kMin,       // args: >= 2 operands, sorted, distinct
  kMax,
  kSum,    // k: constant term; args: atoms or products, sorted, distinct; coefs != 0
  kConst,  // k: value
};

struct ExprNode {
  ExprKind kind = ExprKind::kConst;
  bool opaque = false;  // kSymbol: a fresh symbol standing for a refused expression
  int64_t k = 0;
  std::string name;
  std::vector<const ExprNode*> args;
  std::vector<int64_t> coefs;
  size_t hash = 0;
  int32_t size = 1;  // tree nodes, shared sub-trees counted each time
  int32_t depth = 1;
  // Interval bounds over the domain; kNegInf / kPosInf mean unbounded.
  int64_t lo = 0;
  int64_t hi = 0;
};

namespace {

constexpr int32_t kMaxNodes = 256;
constexpr int32_t kMaxDepth = 32;
constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

size_t Mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t ShallowHash(const ExprNode& n) {
  size_t h = Mix(static_cast<size_t>(n.kind), std::hash<int64_t>()(n.k));
  if (n.kind == ExprKind::kSymbol) h = Mix(h, std::hash<std::string>()(n.name) + n.opaque);
  for (const ExprNode* a : n.args) h = Mix(h, std::hash<const void*>()(a));
  for (int64_t c : n.coefs) h = Mix(h, std::hash<int64_t>()(c));
  return h;
}

struct NodeHash {
  size_t operator()(const ExprNode* n) const { return n->hash; }
};
struct NodeEq {
  bool operator()(const ExprNode* a, const ExprNode* b) const {
    return a->kind == b->kind && a->k == b->k && a->opaque == b->opaque && a->name == b->name &&
           a->args == b->args && a->coefs == b->coefs;
  }
};

// ---- saturating interval arithmetic (kNegInf/kPosInf are infinities) ----

int64_t SatAdd(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return (a == kPosInf || b == kPosInf) ? kNegInf : kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  const bool neg = (a < 0) != (b < 0);
  if (a == kNegInf || a == kPosInf || b == kNegInf || b == kPosInf) return neg ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return neg ? kNegInf : kPosInf;
  return r;
}

int64_t FloorDivInt(int64_t a, int64_t k) {  // k > 0
  if (a == kNegInf || a == kPosInf) return a;
  int64_t q = a / k;
  if ((a % k) != 0 && a < 0) --q;
  return q;
}

int64_t ModInt(int64_t a, int64_t k) {  // k > 0, result in [0, k)
  int64_t r = a % k;
  return r < 0 ? r + k : r;
}

// [lo, hi] scaled by c (either sign).
std::pair<int64_t, int64_t> Scale(int64_t lo, int64_t hi, int64_t c) {
  if (c >= 0) return {SatMul(lo, c), SatMul(hi, c)};
  return {SatMul(hi, c), SatMul(lo, c)};
}

std::pair<int64_t, int64_t> MulIntervals(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi) {
  const int64_t c[] = {SatMul(alo, blo), SatMul(alo, bhi), SatMul(ahi, blo), SatMul(ahi, bhi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// Structural order: deterministic across runs (never by address).
int Compare(const ExprNode* a, const ExprNode* b) {
  if (a == b) return 0;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  if (a->kind == ExprKind::kSymbol) {
    if (a->opaque != b->opaque) return a->opaque ? 1 : -1;
    return a->name < b->name ? -1 : (a->name > b->name ? 1 : 0);
  }
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  const size_t n = std::min(a->args.size(), b->args.size());
  for (size_t i = 0; i < n; ++i) {
    if (int c = Compare(a->args[i], b->args[i]); c != 0) return c;
    if (i < a->coefs.size() && a->coefs[i] != b->coefs[i])
      return a->coefs[i] < b->coefs[i] ? -1 : 1;
  }
  if (a->args.size() != b->args.size()) return a->args.size() < b->args.size() ? -1 : 1;
  return 0;
}

bool Less(const ExprNode* a, const ExprNode* b) { return Compare(a, b) < 0; }

// A linear combination c + sum(coef * term) over atoms/products, the working form of sums.
struct Poly {
  int64_t c = 0;
  std::vector<std::pair<const ExprNode*, int64_t>> terms;
  bool overflow = false;
};

}  // namespace

// The process-wide pool; all node creation goes through it.
struct ExprPool {
  std::mutex mu;
  std::unordered_set<const ExprNode*, NodeHash, NodeEq> table;
  std::deque<ExprNode> storage;
  std::atomic<int64_t> opaque_counter{0};
  struct PairHash {
    size_t operator()(const std::pair<const ExprNode*, const ExprNode*>& p) const {
      return Mix(std::hash<const void*>()(p.first), std::hash<const void*>()(p.second));
    }
  };
  std::unordered_map<std::pair<const ExprNode*, const ExprNode*>, Truth, PairHash>
      decide_cache;  // under mu

  static ExprPool& Get() {
    static ExprPool* pool = new ExprPool();
    return *pool;
  }

  static Expr Wrap(const ExprNode* n) { return Expr(n); }

  // Interns `n` (its shallow fields set); fills hash/size/depth/bounds first.
  const ExprNode* Intern(ExprNode n) {
    n.hash = ShallowHash(n);
    std::lock_guard<std::mutex> lock(mu);
    auto it = table.find(&n);
    if (it != table.end()) return *it;
    storage.push_back(std::move(n));
    const ExprNode* p = &storage.back();
    table.insert(p);
    return p;
  }

  const ExprNode* Const(int64_t v) {
    ExprNode n;
    n.kind = ExprKind::kConst;
    n.k = v;
    n.lo = n.hi = v;
    return Intern(std::move(n));
  }

  const ExprNode* Symbol(std::string_view name, bool opaque) {
    ExprNode n;
    n.kind = ExprKind::kSymbol;
    n.name = std::string(name);
    n.opaque = opaque;
    n.lo = 1;
    n.hi = kPosInf;
    return Intern(std::move(n));
  }

  const ExprNode* Opaque() {
    const int64_t id = ++opaque_counter;
    return Symbol(absl::StrCat("opaque#", id), true);
  }

  // Fills size/depth from args and refuses oversize results.
  static bool Measure(ExprNode& n) {
    int64_t size = 1;
    int32_t depth = 0;
    for (const ExprNode* a : n.args) {
      size += a->size;
      depth = std::max(depth, a->depth);
    }
    n.depth = depth + 1;
    n.size = static_cast<int32_t>(std::min<int64_t>(size, kMaxNodes + 1));
    return size <= kMaxNodes && n.depth <= kMaxDepth;
  }

  // ---- canonical construction ----

  static Poly ToPoly(const ExprNode* n) {
    Poly p;
    if (n->kind == ExprKind::kConst) {
      p.c = n->k;
    } else if (n->kind == ExprKind::kSum) {
      p.c = n->k;
      for (size_t i = 0; i < n->args.size(); ++i) p.terms.emplace_back(n->args[i], n->coefs[i]);
    } else {
      p.terms.emplace_back(n, 1);
    }
    return p;
  }

  const ExprNode* FromPoly(Poly p) {
    if (p.overflow) return Opaque();
    std::sort(p.terms.begin(), p.terms.end(),
              [](const auto& a, const auto& b) { return Less(a.first, b.first); });
    ExprNode n;
    n.kind = ExprKind::kSum;
    n.k = p.c;
    for (size_t i = 0; i < p.terms.size();) {
      int64_t coef = 0;
      size_t j = i;
      for (; j < p.terms.size() && p.terms[j].first == p.terms[i].first; ++j) {
        if (__builtin_add_overflow(coef, p.terms[j].second, &coef)) return Opaque();
      }
      if (coef != 0) {
        n.args.push_back(p.terms[i].first);
        n.coefs.push_back(coef);
      }
      i = j;
    }
    if (n.args.empty()) return Const(p.c);
    if (n.k == 0 && n.args.size() == 1 && n.coefs[0] == 1) return n.args[0];
    if (!Measure(n)) return Opaque();
    n.lo = n.hi = n.k;
    for (size_t i = 0; i < n.args.size(); ++i) {
      auto [lo, hi] = Scale(n.args[i]->lo, n.args[i]->hi, n.coefs[i]);
      n.lo = SatAdd(n.lo, lo);
      n.hi = SatAdd(n.hi, hi);
    }
    return Intern(std::move(n));
  }

  const ExprNode* Add(const ExprNode* a, const ExprNode* b, int64_t b_scale) {
    Poly p = ToPoly(a);
    Poly q = ToPoly(b);
    int64_t qc;
    if (__builtin_mul_overflow(q.c, b_scale, &qc) || __builtin_add_overflow(p.c, qc, &p.c)) {
      return Opaque();
    }
    for (auto [t, c] : q.terms) {
      int64_t sc;
      if (__builtin_mul_overflow(c, b_scale, &sc)) return Opaque();
      p.terms.emplace_back(t, sc);
    }
    return FromPoly(std::move(p));
  }

  static void AtomsOf(const ExprNode* t, std::vector<const ExprNode*>& out) {
    if (t->kind == ExprKind::kProduct) {
      out.insert(out.end(), t->args.begin(), t->args.end());
    } else {
      out.push_back(t);
    }
  }

  const ExprNode* MulTerms(const ExprNode* a, const ExprNode* b) {
    ExprNode n;
    n.kind = ExprKind::kProduct;
    AtomsOf(a, n.args);
    AtomsOf(b, n.args);
    std::sort(n.args.begin(), n.args.end(), Less);
    if (!Measure(n)) return nullptr;
    n.lo = n.hi = 1;
    for (const ExprNode* f : n.args) std::tie(n.lo, n.hi) = MulIntervals(n.lo, n.hi, f->lo, f->hi);
    return Intern(std::move(n));
  }

  const ExprNode* Mul(const ExprNode* a, const ExprNode* b) {
    const Poly p = ToPoly(a);
    const Poly q = ToPoly(b);
    if (p.terms.size() * q.terms.size() > static_cast<size_t>(kMaxNodes)) return Opaque();
    Poly r;
    if (__builtin_mul_overflow(p.c, q.c, &r.c)) return Opaque();
    for (auto [t, c] : p.terms) {
      int64_t sc;
      if (__builtin_mul_overflow(c, q.c, &sc)) return Opaque();
      r.terms.emplace_back(t, sc);
    }
    for (auto [t, c] : q.terms) {
      int64_t sc;
      if (__builtin_mul_overflow(c, p.c, &sc)) return Opaque();
      r.terms.emplace_back(t, sc);
    }
    for (auto [t1, c1] : p.terms) {
      for (auto [t2, c2] : q.terms) {
        int64_t c;
        if (__builtin_mul_overflow(c1, c2, &c)) return Opaque();
        const ExprNode* t = MulTerms(t1, t2);
        if (t == nullptr) return Opaque();
        r.terms.emplace_back(t, c);
      }
    }
    return FromPoly(std::move(r));
  }

  // Splits `p` as k*outer + inner with inner's coefficients and constant in [0, k).
  static bool SplitByDivisor(const Poly& p, int64_t k, Poly& outer, Poly& inner) {
    outer.c = FloorDivInt(p.c, k);
    inner.c = ModInt(p.c, k);
    for (auto [t, c] : p.terms) {
      const int64_t q = FloorDivInt(c, k);
      const int64_t r = ModInt(c, k);
      if (q != 0) outer.terms.emplace_back(t, q);
      if (r != 0) inner.terms.emplace_back(t, r);
    }
    return true;
  }

  const ExprNode* FloorConst(const ExprNode* x, int64_t k) {
    if (k == 1) return x;
    if (x->kind == ExprKind::kConst) return Const(FloorDivInt(x->k, k));
    Poly outer, inner;
    SplitByDivisor(ToPoly(x), k, outer, inner);
    // gcd of inner coefficients and k: floor((g*Y + c)/(g*k')) = floor((Y + floor(c/g))/k').
    int64_t g = k;
    for (auto [t, c] : inner.terms) g = std::gcd(g, c);
    if (g > 1) {
      for (auto& [t, c] : inner.terms) c /= g;
      inner.c /= g;  // inner.c >= 0
      k /= g;
    }
    const ExprNode* rest = nullptr;
    if (inner.terms.empty() || k == 1) {
      rest = k == 1 ? FromPoly(inner) : Const(FloorDivInt(inner.c, k));
    } else if (inner.terms.size() == 1 && inner.terms[0].second == 1 &&
               inner.terms[0].first->kind == ExprKind::kFloorDiv) {
      // floor((floor(Y/m) + c)/k) = floor((Y + c*m)/(m*k)).
      const ExprNode* f = inner.terms[0].first;
      int64_t mk, cm;
      if (!__builtin_mul_overflow(f->k, k, &mk) && !__builtin_mul_overflow(inner.c, f->k, &cm)) {
        const ExprNode* y = Add(f->args[0], Const(cm), 1);
        rest = FloorConst(y, mk);
      }
    }
    if (rest == nullptr) {
      const ExprNode* y = FromPoly(inner);
      if (y->opaque) return y;
      if (y->lo != kNegInf && y->hi != kPosInf && FloorDivInt(y->lo, k) == FloorDivInt(y->hi, k)) {
        rest = Const(FloorDivInt(y->lo, k));
      } else {
        ExprNode n;
        n.kind = ExprKind::kFloorDiv;
        n.k = k;
        n.args = {y};
        if (!Measure(n)) return Opaque();
        n.lo = FloorDivInt(y->lo, k);
        n.hi = FloorDivInt(y->hi, k);
        rest = Intern(std::move(n));
      }
    }
    return Add(FromPoly(std::move(outer)), rest, 1);
  }

  const ExprNode* ModConst(const ExprNode* x, int64_t k) {
    if (k == 1) return Const(0);
    if (x->kind == ExprKind::kConst) return Const(ModInt(x->k, k));
    Poly outer, inner;
    SplitByDivisor(ToPoly(x), k, outer, inner);
    // A mod(Z, m) term with k | m is congruent to Z modulo k.
    bool replaced = false;
    for (auto& [t, c] : inner.terms) {
      if (t->kind == ExprKind::kMod && t->k % k == 0) {
        replaced = true;
        break;
      }
    }
    if (replaced) {
      const ExprNode* sum = Const(inner.c);
      for (auto [t, c] : inner.terms) {
        const ExprNode* term = (t->kind == ExprKind::kMod && t->k % k == 0) ? t->args[0] : t;
        sum = Add(sum, term, c);
      }
      return sum->opaque ? sum : ModConst(sum, k);
    }
    if (inner.terms.empty()) return Const(inner.c);
    // mod(g*Y + c, g*k') = g*mod(Y + floor(c/g), k') + c mod g.
    int64_t g = k;
    for (auto [t, c] : inner.terms) g = std::gcd(g, c);
    if (g > 1) {
      Poly y;
      y.c = inner.c / g;
      for (auto [t, c] : inner.terms) y.terms.emplace_back(t, c / g);
      const ExprNode* m = ModConst(FromPoly(std::move(y)), k / g);
      return Add(Const(inner.c % g), m, g);
    }
    const ExprNode* y = FromPoly(std::move(inner));
    if (y->opaque) return y;
    if (y->lo >= 0 && y->hi < k) return y;
    ExprNode n;
    n.kind = ExprKind::kMod;
    n.k = k;
    n.args = {y};
    if (!Measure(n)) return Opaque();
    n.lo = 0;
    n.hi = k - 1;
    return Intern(std::move(n));
  }

  const ExprNode* MinMax(ExprKind kind, const ExprNode* a, const ExprNode* b) {
    const bool is_max = kind == ExprKind::kMax;
    std::vector<const ExprNode*> ops;
    for (const ExprNode* x : {a, b}) {
      if (x->kind == kind) {
        ops.insert(ops.end(), x->args.begin(), x->args.end());
      } else {
        ops.push_back(x);
      }
    }
    // Fold constants into one.
    std::optional<int64_t> c;
    std::vector<const ExprNode*> rest;
    for (const ExprNode* x : ops) {
      if (x->kind == ExprKind::kConst) {
        c = !c ? x->k : (is_max ? std::max(*c, x->k) : std::min(*c, x->k));
      } else if (std::find(rest.begin(), rest.end(), x) == rest.end()) {
        rest.push_back(x);
      }
    }
    if (c) rest.push_back(Const(*c));
    // Drop operands another one provably dominates (difference bounds).
    std::vector<bool> dropped(rest.size(), false);
    for (size_t i = 0; i < rest.size(); ++i) {
      for (size_t j = 0; j < rest.size() && !dropped[i]; ++j) {
        if (i == j || dropped[j]) continue;
        // max: i is dropped when rest[j] - rest[i] >= 0 always.
        const ExprNode* d = is_max ? Add(rest[j], rest[i], -1) : Add(rest[i], rest[j], -1);
        if (!d->opaque && d->lo >= 0) dropped[i] = true;
      }
    }
    ExprNode n;
    n.kind = kind;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (!dropped[i]) n.args.push_back(rest[i]);
    }
    if (n.args.size() == 1) return n.args[0];
    std::sort(n.args.begin(), n.args.end(), Less);
    if (!Measure(n)) return Opaque();
    n.lo = n.args[0]->lo;
    n.hi = n.args[0]->hi;
    for (const ExprNode* x : n.args) {
      n.lo = is_max ? std::max(n.lo, x->lo) : std::min(n.lo, x->lo);
      n.hi = is_max ? std::max(n.hi, x->hi) : std::min(n.hi, x->hi);
    }
    return Intern(std::move(n));
  }
};

namespace {

ExprPool& Pool() { return ExprPool::Get(); }

bool IsPlainName(std::string_view name) {
  if (name.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(name[0])) return false;
  for (char c : name) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '.' && c != ':') return false;
  }
  return name != "floor" && name != "ceil" && name != "mod" && name != "min" && name != "max";
}

std::string QuoteName(std::string_view name) {
  if (IsPlainName(name)) return std::string(name);
  std::string out = "`";
  for (char c : name) {
    if (c == '`' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

void Print(const ExprNode* n, std::string& out);

// An atom or product inside a sum or product: parenthesised when it is itself an infix form.
void PrintFactor(const ExprNode* n, std::string& out) {
  if (n->kind == ExprKind::kMod || n->kind == ExprKind::kSum) {
    out += '(';
    Print(n, out);
    out += ')';
  } else {
    Print(n, out);
  }
}

void PrintTerm(const ExprNode* t, int64_t coef, bool first, std::string& out) {
  if (!first) out += coef < 0 ? " - " : " + ";
  const int64_t mag = coef < 0 && !first ? -coef : coef;  // -coef fits: coef != INT64_MIN here
  if (coef == kNegInf && !first) {
    out += absl::StrCat("9223372036854775808*");
  } else if (mag == -1) {
    out += '-';
  } else if (mag != 1) {
    out += absl::StrCat(mag, "*");
  }
  if (t->kind == ExprKind::kProduct && mag == 1) {
    Print(t, out);
  } else {
    PrintFactor(t, out);
  }
}

void Print(const ExprNode* n, std::string& out) {
  switch (n->kind) {
    case ExprKind::kConst:
      out += absl::StrCat(n->k);
      return;
    case ExprKind::kSymbol:
      out += QuoteName(n->name);
      return;
    case ExprKind::kProduct:
      for (size_t i = 0; i < n->args.size(); ++i) {
        if (i > 0) out += '*';
        PrintFactor(n->args[i], out);
      }
      return;
    case ExprKind::kFloorDiv: {
      const ExprNode* y = n->args[0];
      // floor((Y + k - 1)/k) reads better as ceil(Y/k).
      const int64_t yc = y->kind == ExprKind::kSum ? y->k : 0;
      const bool ceil = yc == n->k - 1 && n->k > 1;
      const ExprNode* shown = ceil ? Pool().Add(y, Pool().Const(n->k - 1), -1) : y;
      out += ceil ? "ceil(" : "floor(";
      PrintFactor(shown, out);
      out += absl::StrCat("/", n->k, ")");
      return;
    }
    case ExprKind::kMod:
      PrintFactor(n->args[0], out);
      out += absl::StrCat(" mod ", n->k);
      return;
    case ExprKind::kMin:
    case ExprKind::kMax:
      out += n->kind == ExprKind::kMin ? "min(" : "max(";
      for (size_t i = 0; i < n->args.size(); ++i) {
        if (i > 0) out += ", ";
        Print(n->args[i], out);
      }
      out += ')';
      return;
    case ExprKind::kSum: {
      // Terms with positive coefficients first reads better ("seq - 1", not "-1 + seq").
      bool first = true;
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < n->args.size(); ++i) {
          if ((n->coefs[i] > 0) != (pass == 0)) continue;
          PrintTerm(n->args[i], n->coefs[i], first, out);
          first = false;
        }
      }
      if (n->k != 0) {
        if (n->k < 0) {
          out += " - ";
          out += n->k == kNegInf ? "9223372036854775808" : absl::StrCat(-n->k);
        } else {
          out += absl::StrCat(" + ", n->k);
        }
      }
      return;
    }
  }
}

void CollectSymbols(const ExprNode* n, std::set<std::string>& out) {
  if (n->kind == ExprKind::kSymbol) {
    out.insert(n->name);
    return;
  }
  for (const ExprNode* a : n->args) CollectSymbols(a, out);
}

// Evaluation with overflow detection; `lookup` gives a symbol's value.
template <typename Lookup>
std::optional<int64_t> Eval(const ExprNode* n, const Lookup& lookup) {
  switch (n->kind) {
    case ExprKind::kConst:
      return n->k;
    case ExprKind::kSymbol:
      return lookup(n);
    case ExprKind::kProduct: {
      int64_t v = 1;
      for (const ExprNode* a : n->args) {
        std::optional<int64_t> x = Eval(a, lookup);
        if (!x || __builtin_mul_overflow(v, *x, &v)) return std::nullopt;
      }
      return v;
    }
    case ExprKind::kFloorDiv: {
      std::optional<int64_t> x = Eval(n->args[0], lookup);
      if (!x) return std::nullopt;
      return FloorDivInt(*x, n->k);
    }
    case ExprKind::kMod: {
      std::optional<int64_t> x = Eval(n->args[0], lookup);
      if (!x) return std::nullopt;
      return ModInt(*x, n->k);
    }
    case ExprKind::kMin:
    case ExprKind::kMax: {
      std::optional<int64_t> best;
      for (const ExprNode* a : n->args) {
        std::optional<int64_t> x = Eval(a, lookup);
        if (!x) return std::nullopt;
        if (!best || (n->kind == ExprKind::kMax ? *x > *best : *x < *best)) best = x;
      }
      return best;
    }
    case ExprKind::kSum: {
      int64_t v = n->k;
      for (size_t i = 0; i < n->args.size(); ++i) {
        std::optional<int64_t> x = Eval(n->args[i], lookup);
        int64_t t;
        if (!x || __builtin_mul_overflow(*x, n->coefs[i], &t) || __builtin_add_overflow(v, t, &v)) {
          return std::nullopt;
        }
      }
      return v;
    }
  }
  return std::nullopt;
}

// ---- the eventual structure of one-symbol expressions ----

// A rational p/q with q > 0, in lowest terms; `bad` after overflow.
struct Q {
  __int128 p = 0;
  __int128 q = 1;
};

constexpr __int128 kQLimit = static_cast<__int128>(1) << 62;

bool Norm(Q& x) {
  if (x.q < 0) {
    x.p = -x.p;
    x.q = -x.q;
  }
  __int128 a = x.p < 0 ? -x.p : x.p, b = x.q;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) {
    x.p /= a;
    x.q /= a;
  }
  return (x.p < kQLimit && x.p > -kQLimit && x.q < kQLimit);
}

double ToDouble(const Q& x) { return static_cast<double>(x.p) / static_cast<double>(x.q); }

// For f(H), H >= 1: f(H) - s*H lies in [lo, hi] for every H >= 1, and for H >= t,
// f(H + period) = f(H) + s*period.
struct Envelope {
  Q s;
  double lo = 0, hi = 0;
  double t = 1;
  int64_t period = 1;
};

constexpr int64_t kMaxPeriod = int64_t{1} << 20;

bool Lcm(int64_t a, int64_t b, int64_t& out) {
  const int64_t g = std::gcd(a, b);
  return !__builtin_mul_overflow(a / g, b, &out) && out <= kMaxPeriod;
}

std::optional<Envelope> EnvelopeOf(const ExprNode* n) {
  Envelope e;
  switch (n->kind) {
    case ExprKind::kConst:
      e.lo = e.hi = static_cast<double>(n->k);
      return e;
    case ExprKind::kSymbol:
      e.s = Q{1, 1};
      return e;
    case ExprKind::kSum: {
      e.lo = e.hi = static_cast<double>(n->k);
      for (size_t i = 0; i < n->args.size(); ++i) {
        std::optional<Envelope> a = EnvelopeOf(n->args[i]);
        if (!a) return std::nullopt;
        const double c = static_cast<double>(n->coefs[i]);
        e.s = Q{e.s.p * a->s.q + n->coefs[i] * a->s.p * e.s.q, e.s.q * a->s.q};
        if (!Norm(e.s)) return std::nullopt;
        e.lo += c >= 0 ? c * a->lo : c * a->hi;
        e.hi += c >= 0 ? c * a->hi : c * a->lo;
        e.t = std::max(e.t, a->t);
        if (!Lcm(e.period, a->period, e.period)) return std::nullopt;
      }
      return e;
    }
    case ExprKind::kProduct: {
      // Only products of bounded periodic factors keep the structure.
      e.lo = e.hi = 1;
      for (const ExprNode* f : n->args) {
        std::optional<Envelope> a = EnvelopeOf(f);
        if (!a || a->s.p != 0) return std::nullopt;
        const double c[] = {e.lo * a->lo, e.lo * a->hi, e.hi * a->lo, e.hi * a->hi};
        e.lo = *std::min_element(c, c + 4);
        e.hi = *std::max_element(c, c + 4);
        e.t = std::max(e.t, a->t);
        if (!Lcm(e.period, a->period, e.period)) return std::nullopt;
      }
      return e;
    }
    case ExprKind::kFloorDiv:
    case ExprKind::kMod: {
      std::optional<Envelope> a = EnvelopeOf(n->args[0]);
      if (!a) return std::nullopt;
      const int64_t k = n->k;
      // s*period is an integer; stretch the period until k divides the shift.
      Q shift{a->s.p * a->period, a->s.q};
      if (!Norm(shift) || shift.q != 1) return std::nullopt;
      const __int128 sp = shift.p < 0 ? -shift.p : shift.p;
      const int64_t g = sp == 0 ? k : std::gcd(static_cast<int64_t>(sp % k), k);
      const int64_t m = sp == 0 ? 1 : k / g;
      if (__builtin_mul_overflow(a->period, m, &e.period) || e.period > kMaxPeriod) {
        return std::nullopt;
      }
      e.t = a->t;
      if (n->kind == ExprKind::kMod) {
        e.lo = 0;
        e.hi = static_cast<double>(k - 1);
      } else {
        e.s = Q{a->s.p, a->s.q * k};
        if (!Norm(e.s)) return std::nullopt;
        e.lo = a->lo / static_cast<double>(k) - 1;
        e.hi = a->hi / static_cast<double>(k);
      }
      return e;
    }
    case ExprKind::kMin:
    case ExprKind::kMax: {
      const bool is_max = n->kind == ExprKind::kMax;
      std::optional<Envelope> acc;
      for (const ExprNode* x : n->args) {
        std::optional<Envelope> b = EnvelopeOf(x);
        if (!b) return std::nullopt;
        if (!acc) {
          acc = b;
          continue;
        }
        Envelope& a = *acc;
        Envelope r;
        r.t = std::max(a.t, b->t);
        // Compare slopes exactly.
        const __int128 lhs = a.s.p * b->s.q, rhs = b->s.p * a.s.q;
        if (lhs == rhs) {
          r.s = a.s;
          r.lo = is_max ? std::max(a.lo, b->lo) : std::min(a.lo, b->lo);
          r.hi = is_max ? std::max(a.hi, b->hi) : std::min(a.hi, b->hi);
          if (!Lcm(a.period, b->period, r.period)) return std::nullopt;
        } else {
          // The winner eventually: larger slope for max, smaller for min.
          const bool a_wins = (lhs > rhs) == is_max;
          const Envelope& w = a_wins ? a : *b;
          const Envelope& l = a_wins ? *b : a;
          const double ds = std::fabs(ToDouble(w.s) - ToDouble(l.s));
          // max: w - l = ds*H + (rw - rl) > 0 once H > (hi_l - lo_w)/ds; min mirrors it.
          const double cross = is_max ? (l.hi - w.lo) / ds : (w.hi - l.lo) / ds;
          r.t = std::max(r.t, std::floor(cross) + 2);
          r.s = w.s;
          r.period = w.period;
          if (is_max) {
            r.lo = w.lo;
            r.hi = std::max(w.hi, l.hi - ds);  // at H >= 1, l - s_w*H = r_l - ds*H
          } else {
            r.hi = w.hi;
            r.lo = std::min(w.lo, l.lo + ds);
          }
        }
        acc = r;
      }
      return acc;
    }
  }
  return std::nullopt;
}

}  // namespace

// ---- Expr ----

Expr::Expr() : node_(Pool().Const(0)) {}
Expr Expr::Const(int64_t value) { return Expr(Pool().Const(value)); }
Expr Expr::Symbol(std::string_view name) { return Expr(Pool().Symbol(name, false)); }
Expr Expr::Opaque() { return Expr(Pool().Opaque()); }

Expr operator+(Expr a, Expr b) { return Expr(Pool().Add(a.node_, b.node_, 1)); }
Expr operator-(Expr a, Expr b) { return Expr(Pool().Add(a.node_, b.node_, -1)); }
Expr operator*(Expr a, Expr b) { return Expr(Pool().Mul(a.node_, b.node_)); }
Expr Expr::operator-() const { return Expr(Pool().Add(Pool().Const(0), node_, -1)); }

std::optional<Expr> Expr::FloorDiv(Expr a, Expr b) {
  if (std::optional<int64_t> k = b.AsConst()) {
    if (*k <= 0) return std::nullopt;
    return Expr(Pool().FloorConst(a.node_, *k));
  }
  return ExactDiv(a, b);
}

std::optional<Expr> Expr::CeilDiv(Expr a, Expr b) {
  if (std::optional<int64_t> k = b.AsConst()) {
    if (*k <= 0) return std::nullopt;
    return Expr(Pool().FloorConst(Pool().Add(a.node_, Pool().Const(*k - 1), 1), *k));
  }
  return ExactDiv(a, b);
}

std::optional<Expr> Expr::Mod(Expr a, Expr b) {
  if (std::optional<int64_t> k = b.AsConst()) {
    if (*k <= 0) return std::nullopt;
    return Expr(Pool().ModConst(a.node_, *k));
  }
  if (ExactDiv(a, b)) return Expr::Const(0);
  return std::nullopt;
}

std::optional<Expr> Expr::ExactDiv(Expr a, Expr b) {
  if (b.IsConst(0)) return std::nullopt;
  if (a.IsConst(0)) return a;
  if (std::optional<int64_t> k = b.AsConst()) {
    // Exact when every coefficient and the constant are multiples of k.
    const Poly p = ExprPool::ToPoly(a.node_);
    if (p.c % *k != 0) return std::nullopt;
    for (auto [t, c] : p.terms) {
      if (c % *k != 0) return std::nullopt;
    }
    if (*k == -1 && p.c == kNegInf) return std::nullopt;
    Poly q;
    q.c = p.c / *k;
    for (auto [t, c] : p.terms) q.terms.emplace_back(t, c / *k);
    return Expr(Pool().FromPoly(std::move(q)));
  }
  // A single-term divisor c*m (m a product of atoms): every term of a must contain m.
  const Poly d = ExprPool::ToPoly(b.node_);
  if (d.c != 0 || d.terms.size() != 1) return std::nullopt;
  const auto [dm, dc] = d.terms[0];
  std::vector<const ExprNode*> den;
  ExprPool::AtomsOf(dm, den);
  const Poly p = ExprPool::ToPoly(a.node_);
  if (p.c != 0) return std::nullopt;
  Poly q;
  for (auto [t, c] : p.terms) {
    if (c % dc != 0) return std::nullopt;
    std::vector<const ExprNode*> num;
    ExprPool::AtomsOf(t, num);
    // Multiset difference num - den (both sorted).
    std::vector<const ExprNode*> rest;
    size_t j = 0;
    for (const ExprNode* x : num) {
      if (j < den.size() && x == den[j]) {
        ++j;
      } else {
        rest.push_back(x);
      }
    }
    if (j != den.size()) return std::nullopt;
    const ExprNode* term = Pool().Const(1);
    for (const ExprNode* x : rest) term = Pool().Mul(term, x);
    if (term->kind == ExprKind::kConst) {
      q.c += c / dc;
    } else {
      q.terms.emplace_back(term, c / dc);
    }
  }
  return Expr(Pool().FromPoly(std::move(q)));
}

Expr Expr::Min(Expr a, Expr b) { return Expr(Pool().MinMax(ExprKind::kMin, a.node_, b.node_)); }
Expr Expr::Max(Expr a, Expr b) { return Expr(Pool().MinMax(ExprKind::kMax, a.node_, b.node_)); }

std::optional<int64_t> Expr::AsConst() const {
  if (node_->kind == ExprKind::kConst) return node_->k;
  return std::nullopt;
}

std::optional<std::string_view> Expr::AsSymbol() const {
  if (node_->kind == ExprKind::kSymbol) return std::string_view(node_->name);
  return std::nullopt;
}

const std::string& Expr::SymbolName() const {
  static const std::string* const kEmpty = new std::string();
  return node_->kind == ExprKind::kSymbol ? node_->name : *kEmpty;
}

bool Expr::IsOpaque() const { return node_->kind == ExprKind::kSymbol && node_->opaque; }

std::vector<std::string> Expr::Symbols() const {
  std::set<std::string> names;
  CollectSymbols(node_, names);
  return std::vector<std::string>(names.begin(), names.end());
}

std::optional<int64_t> Expr::Evaluate(const std::map<std::string, int64_t>& bindings) const {
  return Eval(node_, [&](const ExprNode* s) -> std::optional<int64_t> {
    auto it = bindings.find(s->name);
    if (it == bindings.end()) return std::nullopt;
    return it->second;
  });
}

namespace {
const ExprNode* SubstituteNode(const ExprNode* n, const std::map<std::string, Expr>& subst) {
  ExprPool& pool = Pool();
  switch (n->kind) {
    case ExprKind::kConst:
      return n;
    case ExprKind::kSymbol: {
      auto it = subst.find(n->name);
      return it == subst.end() ? n : it->second.node();
    }
    case ExprKind::kProduct: {
      const ExprNode* r = pool.Const(1);
      for (const ExprNode* a : n->args) r = pool.Mul(r, SubstituteNode(a, subst));
      return r;
    }
    case ExprKind::kFloorDiv:
      return pool.FloorConst(SubstituteNode(n->args[0], subst), n->k);
    case ExprKind::kMod:
      return pool.ModConst(SubstituteNode(n->args[0], subst), n->k);
    case ExprKind::kMin:
    case ExprKind::kMax: {
      const ExprNode* r = SubstituteNode(n->args[0], subst);
      for (size_t i = 1; i < n->args.size(); ++i) {
        r = pool.MinMax(n->kind, r, SubstituteNode(n->args[i], subst));
      }
      return r;
    }
    case ExprKind::kSum: {
      const ExprNode* r = pool.Const(n->k);
      for (size_t i = 0; i < n->args.size(); ++i) {
        r = pool.Add(r, SubstituteNode(n->args[i], subst), n->coefs[i]);
      }
      return r;
    }
  }
  return n;
}
}  // namespace

Expr Expr::Substitute(const std::map<std::string, Expr>& subst) const {
  if (subst.empty()) return *this;
  return Expr(SubstituteNode(node_, subst));
}

std::string Expr::ToString() const {
  std::string out;
  Print(node_, out);
  return out;
}

std::optional<int64_t> Expr::LowerBound() const {
  if (node_->lo == kNegInf) return std::nullopt;
  return node_->lo;
}

std::optional<int64_t> Expr::UpperBound() const {
  if (node_->hi == kPosInf) return std::nullopt;
  return node_->hi;
}

bool Expr::operator<(const Expr& o) const { return Compare(node_, o.node_) < 0; }

std::optional<ZeroSetShape> ZeroSetPeriodicity(Expr d) {
  std::set<std::string> names;
  CollectSymbols(d.node(), names);
  if (names.size() > 1) return std::nullopt;
  if (names.empty()) return ZeroSetShape{1, 1};
  std::optional<Envelope> e = EnvelopeOf(d.node());
  if (!e) return std::nullopt;
  ZeroSetShape shape;
  if (e->s.p != 0) {
    // |s*H| <= max(|lo|, |hi|) at a zero: beyond that bound there is none.
    const double bound = std::max(std::fabs(e->lo), std::fabs(e->hi)) / std::fabs(ToDouble(e->s));
    if (!(bound < static_cast<double>(kMaxPeriod))) return std::nullopt;
    shape.threshold = static_cast<int64_t>(std::floor(bound)) + 2;
    shape.period = 1;
  } else {
    if (!(e->t < static_cast<double>(kMaxPeriod))) return std::nullopt;
    shape.threshold = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(e->t)) + 1);
    shape.period = e->period;
  }
  if (shape.threshold + shape.period > kMaxPeriod) return std::nullopt;
  return shape;
}

namespace {

Truth DecideUncached(Expr a, Expr b) {
  const Expr d = a - b;
  if (d.IsOpaque()) return Truth::kSometimes;
  if (std::optional<int64_t> c = d.AsConst()) return *c == 0 ? Truth::kAlways : Truth::kNever;
  const ExprNode* n = d.node();
  if (n->lo > 0 || n->hi < 0) return Truth::kNever;
  // Integer terms: no solution when the gcd of the coefficients does not divide the constant.
  if (n->kind == ExprKind::kSum) {
    int64_t g = 0;
    for (int64_t c : n->coefs) g = std::gcd(g, c);
    if (g > 1 && n->k % g != 0) return Truth::kNever;
  }
  const std::vector<std::string> names = d.Symbols();
  if (names.size() != 1) return Truth::kSometimes;
  std::optional<ZeroSetShape> shape = ZeroSetPeriodicity(d);
  if (!shape) return Truth::kSometimes;
  bool any_zero = false, any_nonzero = false;
  const std::string& name = names[0];
  for (int64_t h = 1; h < shape->threshold + shape->period; ++h) {
    std::optional<int64_t> v =
        Eval(n, [h](const ExprNode*) -> std::optional<int64_t> { return h; });
    if (!v) return Truth::kSometimes;
    (*v == 0 ? any_zero : any_nonzero) = true;
    if (any_zero && any_nonzero) return Truth::kSometimes;
  }
  (void)name;
  return any_zero ? Truth::kAlways : Truth::kNever;
}

}  // namespace

Truth DecideEqual(Expr a, Expr b) {
  if (a == b) return Truth::kAlways;
  if (a.AsConst() && b.AsConst()) return Truth::kNever;
  ExprPool& pool = Pool();
  const std::pair<const ExprNode*, const ExprNode*> key(a.node(), b.node());
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    auto it = pool.decide_cache.find(key);
    if (it != pool.decide_cache.end()) return it->second;
  }
  const Truth t = DecideUncached(a, b);
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.decide_cache.size() > (1u << 20)) pool.decide_cache.clear();
  pool.decide_cache.emplace(key, t);
  return t;
}

}  // namespace onnx_bcast::broadcast
