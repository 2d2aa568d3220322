// Dim expressions: canonical form, printing and parsing, evaluation, bounds and DecideEqual,
// each cross-checked by brute force over ranges of symbol values.
#include "broadcast/expr.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace onnx_bcast::broadcast {
namespace {

Expr S(const char* name) { return Expr::Symbol(name); }
Expr C(int64_t v) { return Expr::Const(v); }
Expr P(const char* text) {
  absl::StatusOr<Expr> e = Expr::Parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  return e.ok() ? *e : Expr();
}
Expr Floor(Expr a, int64_t k) { return *Expr::FloorDiv(a, C(k)); }
Expr Ceil(Expr a, int64_t k) { return *Expr::CeilDiv(a, C(k)); }
Expr Mod(Expr a, int64_t k) { return *Expr::Mod(a, C(k)); }

int64_t FloorRef(int64_t a, int64_t k) { return a >= 0 ? a / k : -((-a + k - 1) / k); }
int64_t ModRef(int64_t a, int64_t k) { return a - k * FloorRef(a, k); }

TEST(Expr, CanonicalFormIdentities) {
  const Expr h = S("H");
  EXPECT_EQ((h + C(1)) - C(1), h);
  EXPECT_EQ(C(2) * h - h, h);
  EXPECT_EQ(Floor(C(2) * h + C(2), 2), h + C(1));
  EXPECT_EQ(Floor(Floor(h, 2), 2), Floor(h, 4));
  EXPECT_EQ(Mod(C(2) * h, 2), C(0));
  EXPECT_EQ(Expr::Max(h, C(1)), h);
  EXPECT_EQ(Expr::Min(h, h), h);
  EXPECT_EQ(Expr::Min(h, C(1)), C(1));
  EXPECT_EQ(Ceil(h, 1), h);
  EXPECT_EQ(Mod(h, 1), C(0));
  EXPECT_EQ(Floor(Mod(h, 4), 4), C(0));
  EXPECT_EQ(Mod(Mod(h, 8), 4), Mod(h, 4));
  EXPECT_EQ(S("a") + S("b"), S("b") + S("a"));
  EXPECT_EQ(S("a") * S("b"), S("b") * S("a"));
  EXPECT_EQ((S("a") + C(1)) * (S("a") - C(1)), S("a") * S("a") - C(1));
  EXPECT_EQ(Expr::Max(S("a"), S("b")), Expr::Max(S("b"), S("a")));
  EXPECT_EQ(Expr::Max(Expr::Max(S("a"), S("b")), S("c")),
            Expr::Max(S("a"), Expr::Max(S("b"), S("c"))));
  EXPECT_EQ(Expr(), C(0));
  // Conv output for kernel 3, stride 2, pad 1: floor((H - 1)/2) + 1 is ceil(H/2).
  EXPECT_EQ(Floor(h - C(1), 2) + C(1), Ceil(h, 2));
  EXPECT_EQ(Mod(C(2) * h + C(1), 4), C(2) * Mod(h, 2) + C(1));
  EXPECT_EQ(Floor(C(2) * h + C(1), 4), Floor(h, 2));
  EXPECT_EQ(Expr::Max(h, h + C(1)), h + C(1));
  // Three stride-2 stages collapse.
  EXPECT_EQ(Ceil(Ceil(Ceil(h, 2), 2), 2), Ceil(h, 8));
}

TEST(Expr, ExactDivision) {
  const Expr n = S("N"), c = S("C"), h = S("H");
  EXPECT_EQ(Expr::ExactDiv(n * c * h, c * h), n);
  EXPECT_EQ(Expr::ExactDiv(C(6) * n + C(4), C(2)), C(3) * n + C(2));
  EXPECT_FALSE(Expr::ExactDiv(n + C(1), C(2)).has_value());
  EXPECT_FALSE(Expr::ExactDiv(n * c + C(1), c).has_value());
  EXPECT_EQ(Expr::FloorDiv(n * c, c), n);
  EXPECT_FALSE(Expr::FloorDiv(n, c).has_value());
  EXPECT_FALSE(Expr::FloorDiv(n, C(0)).has_value());
  EXPECT_FALSE(Expr::Mod(n, C(-3)).has_value());
}

TEST(Expr, Printing) {
  const Expr h = S("H");
  EXPECT_EQ((C(2) * Ceil(h, 32)).ToString(), "2*ceil(H/32)");
  EXPECT_EQ((S("seq") + S("past_seq")).ToString(), "past_seq + seq");
  EXPECT_EQ(Mod(h, 32).ToString(), "H mod 32");
  EXPECT_EQ(Floor(h + C(1), 3).ToString(), "floor((H + 1)/3)");
  EXPECT_EQ((h - C(1)).ToString(), "H - 1");
  EXPECT_EQ((C(1) - h).ToString(), "-H + 1");
  EXPECT_EQ((Mod(h, 4) + C(1)).ToString(), "(H mod 4) + 1");
  EXPECT_EQ(Expr::Max(S("N"), S("M")).ToString(), "max(M, N)");
  EXPECT_EQ((S("a") * S("b") * C(3)).ToString(), "3*a*b");
  EXPECT_EQ(S("batch size").ToString(), "`batch size`");
  EXPECT_EQ(S("max").ToString(), "`max`");
  EXPECT_EQ(S("x.1:y").ToString(), "x.1:y");
}

TEST(Expr, ParseRoundTrip) {
  const char* texts[] = {"2*ceil(H/32)", "past_seq + seq", "H mod 32", "floor((H - 1)/2) + 1",
                         "max(N, M, 1)", "min(H, W) - 3*H*W", "`batch size` + 1",
                         "-(H + 2)*(W - 3)", "floor(floor(H/3)/5) mod 7", "ceil((2*H + 5)/6)",
                         "`a\\`b` * 2", "max(min(H, 4), floor(W/2)) + (H mod 3)*(W mod 5)"};
  for (const char* text : texts) {
    const Expr e = P(text);
    absl::StatusOr<Expr> again = Expr::Parse(e.ToString());
    ASSERT_TRUE(again.ok()) << e.ToString() << ": " << again.status();
    EXPECT_EQ(*again, e) << text << " printed as " << e.ToString();
  }
  EXPECT_EQ(P("`batch size`"), S("batch size"));
  for (const char* malformed :
       {"", "H +", "floor(H/N)", "H mod 0", "bcast(M,N)", "99999999999999999999"}) {
    EXPECT_FALSE(Expr::Parse(malformed).ok()) << malformed;
  }
}

// Evaluates every expression against a direct computation for H in 1..300.
TEST(Expr, EvaluationMatchesBruteForce) {
  const Expr h = S("H");
  for (int64_t v = 1; v <= 300; ++v) {
    const std::map<std::string, int64_t> b = {{"H", v}};
    EXPECT_EQ(Ceil(h, 32).Evaluate(b), (v + 31) / 32);
    EXPECT_EQ(Floor(h - C(7), 3).Evaluate(b), FloorRef(v - 7, 3));
    EXPECT_EQ(Mod(C(5) - C(3) * h, 7).Evaluate(b), ModRef(5 - 3 * v, 7));
    EXPECT_EQ(Floor(Floor(h + C(1), 2) + C(3), 5).Evaluate(b), FloorRef(FloorRef(v + 1, 2) + 3, 5));
    EXPECT_EQ(Mod(Mod(h, 12) + C(5), 4).Evaluate(b), ModRef(ModRef(v, 12) + 5, 4));
    EXPECT_EQ(Expr::Max(h - C(40), C(3) - h).Evaluate(b), std::max(v - 40, 3 - v));
    EXPECT_EQ(Floor(C(6) * h + C(4), 4).Evaluate(b), FloorRef(6 * v + 4, 4));
    EXPECT_EQ(Mod(C(6) * h + C(5), 4).Evaluate(b), ModRef(6 * v + 5, 4));
  }
  EXPECT_FALSE(h.Evaluate({}).has_value());
  EXPECT_FALSE((h * h).Evaluate({{"H", int64_t{1} << 40}}).has_value());
}

TEST(Expr, SubstituteAndSymbols) {
  const Expr e = P("floor((H + W)/2) + N");
  EXPECT_EQ(e.Symbols(), (std::vector<std::string>{"H", "N", "W"}));
  EXPECT_EQ(e.Substitute({{"W", S("H")}, {"N", C(1)}}), S("H") + C(1));
  EXPECT_EQ(e.Substitute({{"H", C(3)}, {"W", C(4)}}), S("N") + C(3));
}

TEST(Expr, BoundsHoldForAllValues) {
  const Expr exprs[] = {P("H mod 32"), P("floor(H/4) + 2"), P("5 - H"), P("max(H, 7)"),
                        P("min(H, 7)"), P("H*W"), P("(H mod 3) - (W mod 5)"), P("-H*W")};
  for (const Expr& e : exprs) {
    const std::optional<int64_t> lo = e.LowerBound(), hi = e.UpperBound();
    for (int64_t h = 1; h <= 40; ++h) {
      for (int64_t w = 1; w <= 40; ++w) {
        const int64_t v = *e.Evaluate({{"H", h}, {"W", w}});
        if (lo) EXPECT_GE(v, *lo) << e.ToString();
        if (hi) EXPECT_LE(v, *hi) << e.ToString();
      }
    }
  }
  EXPECT_EQ(P("H mod 32").UpperBound(), 31);
  EXPECT_EQ(P("H + 2").LowerBound(), 3);
  EXPECT_EQ(P("min(H, 7)").UpperBound(), 7);
}

// DecideEqual against brute force over H in 1..1000.
Truth BruteOne(Expr a, Expr b) {
  bool any = false, all = true;
  for (int64_t v = 1; v <= 1000; ++v) {
    const bool eq = a.Evaluate({{"H", v}}) == b.Evaluate({{"H", v}});
    any = any || eq;
    all = all && eq;
  }
  return all ? Truth::kAlways : (any ? Truth::kSometimes : Truth::kNever);
}

TEST(Expr, DecideEqualOneSymbolMatchesBruteForce) {
  const char* texts[] = {"H",
                         "H + 1",
                         "1",
                         "3",
                         "2*H",
                         "floor(H/2)*2",
                         "H - (H mod 2)",
                         "floor((H - 1)/2) + 1",
                         "ceil(H/2)",
                         "H mod 32",
                         "31",
                         "floor(H/32)*32 + (H mod 32)",
                         "max(H, 5)",
                         "min(H, 5)",
                         "max(2*H - 7, floor(H/3))",
                         "floor(H/3) + floor((H + 1)/3) + floor((H + 2)/3)",
                         "(H mod 4)*(H mod 6)",
                         "floor(floor(H/2)/3)",
                         "floor(H/6)",
                         "H + 3",
                         "0",
                         "min(H mod 5, 2)",
                         "2*ceil(H/32)",
                         "ceil(H/16)"};
  std::vector<Expr> exprs;
  for (const char* t : texts) exprs.push_back(P(t));
  for (const Expr& a : exprs) {
    for (const Expr& b : exprs) {
      EXPECT_EQ(DecideEqual(a, b), BruteOne(a, b)) << a.ToString() << " vs " << b.ToString();
    }
  }
}

TEST(Expr, DecideEqualSeveralSymbols) {
  EXPECT_EQ(DecideEqual(P("a + b"), P("b + a")), Truth::kAlways);
  EXPECT_EQ(DecideEqual(P("a + b + 1"), P("b + a")), Truth::kNever);
  EXPECT_EQ(DecideEqual(P("2*a"), P("2*b + 1")), Truth::kNever);
  EXPECT_EQ(DecideEqual(P("a + b"), P("1")), Truth::kNever);
  EXPECT_EQ(DecideEqual(P("a"), P("b")), Truth::kSometimes);
  EXPECT_EQ(DecideEqual(P("total"), P("past + seq")), Truth::kSometimes);
}

TEST(Expr, SizeBoundGivesOpaqueSymbols) {
  // A sum of 400 symbols: past the bound the partial sum became an opaque symbol.
  Expr e = S("x0");
  for (int i = 1; i < 400; ++i) e = e + S(("x" + std::to_string(i)).c_str());
  EXPECT_NE(e.ToString().find("opaque#"), std::string::npos);
  EXPECT_LT(e.Symbols().size(), 300u);
  Expr deep = S("H");
  for (int i = 0; i < 100; ++i) deep = Expr::Max(deep * S("W"), S("N"));
  EXPECT_NE(deep.ToString().find("opaque#"), std::string::npos);
  EXPECT_LT(deep.ToString().size(), 2000u);
  // A folded constant that overflows.
  EXPECT_TRUE((C(int64_t{1} << 62) * C(4) * S("H")).IsOpaque() ||
              (C(int64_t{1} << 62) * C(4)).IsOpaque());
  EXPECT_FALSE(S("H").IsOpaque());
}

// Random expressions: the canonical form evaluates like the expression as written, prints and
// parses back to itself, and DecideEqual agrees with brute force.
struct Gen {
  uint64_t state = 0x2545F4914F6CDD1DULL;
  uint64_t Next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  int64_t Pick(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
};

struct Built {
  Expr e;
  std::function<int64_t(int64_t, int64_t)> f;
};

Built Random(Gen& g, int depth, bool two_symbols, bool products) {
  if (depth == 0 || g.Pick(4) == 0) {
    switch (g.Pick(3)) {
      case 0: {
        const int64_t c = g.Pick(9) - 3;
        return {C(c), [c](int64_t, int64_t) { return c; }};
      }
      case 1:
        return {S("H"), [](int64_t h, int64_t) { return h; }};
      default:
        if (two_symbols) return {S("W"), [](int64_t, int64_t w) { return w; }};
        return {S("H"), [](int64_t h, int64_t) { return h; }};
    }
  }
  const Built a = Random(g, depth - 1, two_symbols, products);
  const Built b = Random(g, depth - 1, two_symbols, products);
  const int64_t k = 1 + g.Pick(6);
  switch (g.Pick(products ? 8 : 7)) {
    case 0:
      return {a.e + b.e, [a, b](int64_t h, int64_t w) { return a.f(h, w) + b.f(h, w); }};
    case 1:
      return {a.e - b.e, [a, b](int64_t h, int64_t w) { return a.f(h, w) - b.f(h, w); }};
    case 2:
      return {C(k) * a.e, [a, k](int64_t h, int64_t w) { return k * a.f(h, w); }};
    case 3:
      return {Floor(a.e, k), [a, k](int64_t h, int64_t w) { return FloorRef(a.f(h, w), k); }};
    case 4:
      return {Mod(a.e, k), [a, k](int64_t h, int64_t w) { return ModRef(a.f(h, w), k); }};
    case 5:
      return {Expr::Min(a.e, b.e),
              [a, b](int64_t h, int64_t w) { return std::min(a.f(h, w), b.f(h, w)); }};
    case 6:
      return {Expr::Max(a.e, b.e),
              [a, b](int64_t h, int64_t w) { return std::max(a.f(h, w), b.f(h, w)); }};
    default:
      return {a.e * b.e, [a, b](int64_t h, int64_t w) { return a.f(h, w) * b.f(h, w); }};
  }
}

TEST(Expr, RandomExpressionsMatchTheirDefinition) {
  Gen g;
  for (int i = 0; i < 400; ++i) {
    const Built b = Random(g, 4, true, true);
    absl::StatusOr<Expr> again = Expr::Parse(b.e.ToString());
    ASSERT_TRUE(again.ok()) << b.e.ToString();
    EXPECT_EQ(*again, b.e) << b.e.ToString();
    const std::optional<int64_t> lo = b.e.LowerBound(), hi = b.e.UpperBound();
    for (int64_t h = 1; h <= 30; ++h) {
      for (int64_t w = 1; w <= 6; ++w) {
        const int64_t v = b.f(h, w);
        ASSERT_EQ(b.e.Evaluate({{"H", h}, {"W", w}}), v) << b.e.ToString() << " H=" << h;
        if (lo) EXPECT_GE(v, *lo) << b.e.ToString();
        if (hi) EXPECT_LE(v, *hi) << b.e.ToString();
      }
    }
  }
}

TEST(Expr, RandomDecideEqualMatchesBruteForce) {
  Gen g;
  int exact = 0;
  for (int i = 0; i < 1500; ++i) {
    const Built a = Random(g, 3, false, false);
    const Built b = Random(g, 3, false, false);
    bool any = false, all = true;
    for (int64_t h = 1; h <= 2000; ++h) {
      const bool eq = a.f(h, 0) == b.f(h, 0);
      any = any || eq;
      all = all && eq;
    }
    const Truth brute = all ? Truth::kAlways : (any ? Truth::kSometimes : Truth::kNever);
    EXPECT_EQ(DecideEqual(a.e, b.e), brute) << a.e.ToString() << " vs " << b.e.ToString();
    exact += brute != Truth::kSometimes;
  }
  EXPECT_GT(exact, 100);
}

TEST(Expr, ThreadSafeInterning) {
  std::vector<std::vector<const ExprNode*>> seen(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 2000; ++i) {
        const Expr e = Expr::Symbol("T" + std::to_string(i % 50)) * Expr::Const(i % 7) + C(i);
        seen[t].push_back(Floor(Expr::Max(e, Expr::Symbol("U")), 3).node());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(seen[t], seen[0]);
}

}  // namespace
}  // namespace onnx_bcast::broadcast
