// ConditionSet: value-set intersection, contradictions, substitution of pinned
// symbols, duplicate removal and deterministic printing.
#include "broadcast/condition.h"

#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace onnx_bcast::broadcast {
namespace {

Clause NMOr1() {
  return Clause::Of({Atom::EqSymbol("N", "M"), Atom::Eq("N", 1), Atom::Eq("M", 1)});
}

TEST(Condition, AtomAndClausePrinting) {
  EXPECT_EQ(Atom::Eq("N", 5).ToString(), "N == 5");
  EXPECT_EQ(Atom::EqSymbol("N", "M").ToString(), "N == M");
  EXPECT_EQ(Clause::InSet("N", {5, 1}).ToString(), "N ∈ {1, 5}");
  EXPECT_EQ(Clause::InSet("N", {1}).ToString(), "N == 1");
  EXPECT_EQ(NMOr1().ToString(), "N == M or N == 1 or M == 1");
  EXPECT_EQ(Clause().ToString(), "false");
  EXPECT_EQ(Clause::InSet("N", {1, 5}).ValueSetSymbol(), "N");
  EXPECT_EQ(NMOr1().ValueSetSymbol(), std::nullopt);
  EXPECT_EQ(Clause::Of({Atom::Eq("N", 1), Atom::Eq("M", 1)}).ValueSetSymbol(), std::nullopt);
}

TEST(Condition, EmptySetIsTrue) {
  ConditionSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_FALSE(set.contradictory());
  EXPECT_EQ(set.ToString(), "true");
}

// An empty set holds no state; every query answers as for "true", and copies, moves and
// merges with it behave as with any other set.
TEST(Condition, EmptySetAnswersEveryQueryAndCopiesAreIndependent) {
  const ConditionSet empty;
  EXPECT_TRUE(empty.clauses().empty());
  EXPECT_TRUE(empty.value_sets().empty());
  EXPECT_TRUE(empty.symbol_sets().empty());
  EXPECT_TRUE(empty.Symbols().empty());
  EXPECT_EQ(empty.contradiction(), "");
  EXPECT_EQ(empty.ValuesOf("N"), std::nullopt);
  EXPECT_EQ(empty.PinnedValue("N"), std::nullopt);
  EXPECT_EQ(empty.Evaluate({}), true);

  ConditionSet set;
  set.Merge(empty);
  EXPECT_TRUE(set.empty());
  set.Add(Clause::InSet("N", {1, 5}));
  ConditionSet copy = set;
  copy.Add(Clause::InSet("N", {5, 7}));
  EXPECT_EQ(copy.ToString(), "N == 5");
  EXPECT_EQ(set.ToString(), "N ∈ {1, 5}");  // the copy's change stays in the copy
  ConditionSet assigned;
  assigned = set;
  assigned = empty;
  EXPECT_TRUE(assigned.empty());
  ConditionSet moved = std::move(copy);
  EXPECT_EQ(moved.PinnedValue("N"), 5);
  set.Merge(moved);
  EXPECT_EQ(set.ToString(), "N == 5");
  EXPECT_EQ(set.Evaluate({{"N", 5}}), true);
  EXPECT_EQ(set.Evaluate({{"N", 1}}), false);
}

TEST(Condition, SingleValueSet) {
  ConditionSet set;
  set.Add(Clause::InSet("N", {1, 5}));
  EXPECT_EQ(set.ToString(), "N ∈ {1, 5}");
  EXPECT_EQ(set.ValuesOf("N"), (std::set<int64_t>{1, 5}));
  EXPECT_EQ(set.PinnedValue("N"), std::nullopt);
}

TEST(Condition, ValueSetsOfOneSymbolIntersect) {
  ConditionSet set;
  set.Add(Clause::InSet("N", {1, 5}));
  set.Add(Clause::InSet("N", {1, 7}));
  EXPECT_FALSE(set.contradictory());
  EXPECT_EQ(set.ToString(), "N == 1");
  EXPECT_EQ(set.PinnedValue("N"), 1);
  ASSERT_EQ(set.clauses().size(), 1u);
  EXPECT_EQ(set.clauses()[0], Clause::Of({Atom::Eq("N", 1)}));
}

TEST(Condition, EmptyIntersectionIsAContradiction) {
  ConditionSet set;
  set.Add(Clause::InSet("N", {1, 5}));
  set.Add(Clause::InSet("N", {7}));
  EXPECT_TRUE(set.contradictory());
  EXPECT_FALSE(set.empty());
  EXPECT_EQ(set.contradiction(), "N ∈ {1, 5} and N == 7 have no common value");
  EXPECT_EQ(set.ToString(), "false: N ∈ {1, 5} and N == 7 have no common value");
  // A contradiction is final.
  set.Add(Clause::InSet("M", {2}));
  EXPECT_TRUE(set.contradictory());
}

TEST(Condition, ValueAtomsWrittenInAnyOrderFormOneSet) {
  ConditionSet set;
  set.Add(Clause::Of({Atom::Eq("N", 5), Atom::Eq("N", 1), Atom::Eq("N", 5)}));
  EXPECT_EQ(set.ToString(), "N ∈ {1, 5}");
}

TEST(Condition, PinnedSymbolMakesClauseTrue) {
  ConditionSet set;
  set.Add(NMOr1());
  set.Add(Atom::Eq("N", 1));
  EXPECT_EQ(set.ToString(), "N == 1");
}

TEST(Condition, PinnedSymbolShrinksClauseToValueSet) {
  ConditionSet set;
  set.Add(NMOr1());
  set.Add(Atom::Eq("N", 5));
  // N == M becomes M == 5; N == 1 is false; M == 1 stays.
  EXPECT_EQ(set.ToString(), "N == 5 and M ∈ {1, 5}");
  EXPECT_EQ(set.ValuesOf("M"), (std::set<int64_t>{1, 5}));
}

TEST(Condition, SubstitutionCascades) {
  ConditionSet set;
  set.Add(NMOr1());
  set.Add(Clause::Of({Atom::EqSymbol("M", "K"), Atom::Eq("M", 1), Atom::Eq("K", 1)}));
  set.Add(Atom::Eq("N", 5));
  set.Add(Atom::Eq("K", 7));
  // N = 5 forces M ∈ {1, 5}; K = 7 forces M ∈ {1, 7}; so M == 1.
  EXPECT_EQ(set.ToString(), "N == 5 and M == 1 and K == 7");
}

TEST(Condition, PinnedSymbolsMakeClauseFalse) {
  ConditionSet set;
  set.Add(Atom::Eq("N", 5));
  set.Add(Atom::Eq("M", 7));
  set.Add(NMOr1());
  EXPECT_TRUE(set.contradictory());
  EXPECT_EQ(set.contradiction(),
            "(N == M or N == 1 or M == 1) cannot hold given N == 5 and M == 7");
}

TEST(Condition, EmptyClauseIsFalse) {
  ConditionSet set;
  set.Add(Clause());
  EXPECT_TRUE(set.contradictory());
  EXPECT_EQ(set.contradiction(), "false cannot hold");
}

TEST(Condition, AtomsExcludedByValueSetAreDropped) {
  ConditionSet set;
  set.Add(Clause::InSet("N", {1, 5}));
  set.Add(Clause::Of({Atom::Eq("N", 7), Atom::Eq("M", 3)}));
  EXPECT_EQ(set.ToString(), "N ∈ {1, 5} and M == 3");
}

TEST(Condition, SymbolEqualityWithDisjointValueSetsIsFalse) {
  ConditionSet set;
  set.Add(Clause::InSet("N", {1, 2}));
  set.Add(Clause::InSet("M", {3, 4}));
  set.Add(Clause::Of({Atom::EqSymbol("N", "M"), Atom::EqSymbol("K", "L")}));
  EXPECT_EQ(set.ToString(), "N ∈ {1, 2} and M ∈ {3, 4} and K == L");
}

TEST(Condition, TrivialSelfEqualityIsTrue) {
  ConditionSet set;
  set.Add(Clause::Of({Atom::EqSymbol("N", "N")}));
  EXPECT_TRUE(set.empty());
}

TEST(Condition, DuplicateClausesAreRemoved) {
  ConditionSet set;
  set.Add(NMOr1());
  set.Add(NMOr1());
  // Same clause written in another order, with M == N reversed.
  set.Add(Clause::Of({Atom::Eq("M", 1), Atom::EqSymbol("M", "N"), Atom::Eq("N", 1)}));
  EXPECT_EQ(set.clauses().size(), 1u);
  EXPECT_EQ(set.ToString(), "N == M or N == 1 or M == 1");
}

TEST(Condition, PrintingOrderIsValueSetsThenOtherClausesInInsertionOrder) {
  ConditionSet set;
  set.Add(Clause::Of({Atom::EqSymbol("A", "B"), Atom::Eq("A", 1)}));
  set.Add(Clause::InSet("Z", {1, 3}));
  set.Add(Clause::InSet("Y", {1, 2}));
  set.Add(Clause::Of({Atom::EqSymbol("C", "D")}));
  EXPECT_EQ(set.ToString(), "Z ∈ {1, 3} and Y ∈ {1, 2} and (A == B or A == 1) and C == D");
  const std::map<std::string, std::set<int64_t>> expected = {{"Y", {1, 2}}, {"Z", {1, 3}}};
  EXPECT_EQ(set.value_sets(), expected);
  ASSERT_EQ(set.clauses().size(), 4u);
  EXPECT_EQ(set.clauses()[0].ToString(), "Z ∈ {1, 3}");
  EXPECT_EQ(set.clauses()[3].ToString(), "C == D");
}

TEST(Condition, MergeCombinesAndSimplifies) {
  ConditionSet a;
  a.Add(Clause::InSet("N", {1, 5}));
  ConditionSet b;
  b.Add(Clause::InSet("N", {1, 7}));
  b.Add(NMOr1());
  a.Merge(b);
  EXPECT_EQ(a.ToString(), "N == 1");

  ConditionSet bad;
  bad.Add(Atom::Eq("K", 2));
  bad.Add(Atom::Eq("K", 3));
  ASSERT_TRUE(bad.contradictory());
  ConditionSet c;
  c.Merge(bad);
  EXPECT_TRUE(c.contradictory());
  EXPECT_EQ(c.contradiction(), "K == 2 and K == 3 have no common value");
}

TEST(Condition, SimplifyIsIdempotent) {
  ConditionSet set;
  set.Add(NMOr1());
  set.Add(Clause::InSet("K", {1, 4}));
  const std::string before = set.ToString();
  set.Simplify();
  set.Simplify();
  EXPECT_EQ(set.ToString(), before);
  EXPECT_EQ(before, "K ∈ {1, 4} and (N == M or N == 1 or M == 1)");
}

}  // namespace
}  // namespace onnx_bcast::broadcast

namespace onnx_bcast::broadcast {
namespace {

Expr E(const char* text) { return *Expr::Parse(text); }
Atom Eq(const char* a, const char* b) { return Atom::EqExpr(E(a), E(b)); }

// The clauses as given, evaluated directly.
bool Direct(const std::vector<Clause>& clauses, const std::map<std::string, int64_t>& b) {
  for (const Clause& c : clauses) {
    if (c.Evaluate(b) != true) return false;
  }
  return true;
}

// Adds `clauses` one by one and checks, for every binding of H (and W) in 1..limit, that the
// set, its printed clauses' atoms and the direct evaluation agree.
ConditionSet CheckAgainstBruteForce(const std::vector<Clause>& clauses, int64_t limit,
                                    bool two = false) {
  ConditionSet set;
  for (const Clause& c : clauses) set.Add(c);
  for (int64_t h = 1; h <= limit; ++h) {
    for (int64_t w = 1; w <= (two ? limit : 1); ++w) {
      std::map<std::string, int64_t> b = {{"H", h}};
      if (two) b["W"] = w;
      const bool direct = Direct(clauses, b);
      EXPECT_EQ(set.Evaluate(b), direct) << set.ToString() << " at H=" << h << " W=" << w;
      if (!set.contradictory()) {
        EXPECT_EQ(Direct(set.clauses(), b), direct)
            << "clauses of " << set.ToString() << " at H=" << h << " W=" << w;
      }
    }
  }
  return set;
}

TEST(ExprCondition, CongruencesAndFiniteSets) {
  // (H + k) mod 32 == 0 for k = 0..3.
  ConditionSet s = CheckAgainstBruteForce(
      {Clause::Of({Eq("H mod 32", "0"), Eq("(H + 1) mod 32", "0"), Eq("(H + 2) mod 32", "0"),
                   Eq("(H + 3) mod 32", "0")})},
      300);
  EXPECT_EQ(s.ToString(), "H mod 32 ∈ {0, 29, 30, 31}");
  s = CheckAgainstBruteForce({Clause::Of({Eq("2*ceil(H/2)", "H"), Eq("H", "1")})}, 300);
  EXPECT_EQ(s.ToString(), "H == 1 or H mod 2 == 0");
  s = CheckAgainstBruteForce({Clause::Of({Eq("min(H, 3)", "3")})}, 300);
  EXPECT_EQ(s.ToString(), "H >= 3");
  s = CheckAgainstBruteForce({Clause::Of({Eq("floor(H/8)", "2"), Eq("H", "3")})}, 300);
  EXPECT_EQ(s.ToString(), "H ∈ {3, 16, 17, 18, 19, 20, 21, 22, 23}");
  s = CheckAgainstBruteForce({Clause::Of({Eq("max(H, 7) mod 4", "3"), Eq("H", "2")})}, 300);
  EXPECT_EQ(s.ToString(), "H ∈ {1, 2, 4, 5, 6} or H mod 4 == 3");
  s = CheckAgainstBruteForce({Clause::Of({Eq("min(H, 7) + 7*(H mod 4)", "28"), Eq("H", "2")})},
                             300);
  EXPECT_EQ(s.ToString(), "H == 2 or (H >= 7 and H mod 4 == 3)");
  EXPECT_EQ(s.symbol_sets().at("H").period, 4);
  EXPECT_FALSE(s.ValuesOf("H").has_value());
}

// Issue 44 item 7: "and" binds tighter than "or", so a conjunction of two disjunctions (a
// UNet's skip connections, even H and even W) is printed with its parentheses; a clause alone
// and a conjunct that is no disjunction are not.
TEST(ExprCondition, ConjunctionsOfDisjunctionsArePrintedWithParentheses) {
  ConditionSet s;
  s.Add(Clause::Of({Eq("2*ceil(H/2)", "H"), Eq("H", "1")}));
  s.Add(Clause::Of({Eq("2*ceil(W/2)", "W"), Eq("W", "1")}));
  EXPECT_EQ(s.ToString(), "(H == 1 or H mod 2 == 0) and (W == 1 or W mod 2 == 0)");
  s.Add(Clause::Of({Eq("N", "4"), Eq("N", "1")}));
  EXPECT_EQ(s.ToString(), "(H == 1 or H mod 2 == 0) and (W == 1 or W mod 2 == 0) and N ∈ {1, 4}");
  // A disjunction that holds parentheses of its own is grouped once more, as a whole.
  ConditionSet t;
  t.Add(Clause::Of({Eq("min(H, 7) + 7*(H mod 4)", "28"), Eq("H", "2")}));
  t.Add(Clause::Of({Eq("W", "3")}));
  EXPECT_EQ(t.ToString(), "(H == 2 or (H >= 7 and H mod 4 == 3)) and W == 3");
}

TEST(ExprCondition, IntersectionsStayExact) {
  const std::vector<Clause> clauses = {
      Clause::Of({Eq("H mod 2", "0"), Eq("H", "1")}),
      Clause::Of({Eq("H mod 3", "0"), Eq("H", "1"), Eq("H", "4")}),
      Clause::Of({Eq("min(H, 10)", "10"), Eq("H", "1"), Eq("H", "6")})};
  ConditionSet s = CheckAgainstBruteForce(clauses, 300);
  EXPECT_EQ(s.ToString(), "H == 1 or H mod 6 == 0");
  // Merge across nodes is the same intersection.
  ConditionSet a, b;
  a.Add(clauses[0]);
  b.Add(clauses[1]);
  b.Add(clauses[2]);
  a.Merge(b);
  EXPECT_EQ(a.ToString(), s.ToString());
}

TEST(ExprCondition, ContradictionsAreFound) {
  ConditionSet s = CheckAgainstBruteForce({Clause::Of({Eq("H mod 2", "0")}),
                                           Clause::Of({Eq("(H + 1) mod 4", "0")})},
                                          100);
  EXPECT_TRUE(s.contradictory());
  EXPECT_EQ(s.contradiction(), "H mod 2 == 0 and H mod 4 == 3 have no common value");
  s = CheckAgainstBruteForce({Clause::Of({Eq("H + 3", "3"), Eq("H + 3", "1")})}, 100);
  EXPECT_TRUE(s.contradictory());
  EXPECT_EQ(s.Evaluate({}), false);
}

TEST(ExprCondition, SeveralSymbolsKeptAndPrinted) {
  ConditionSet s;
  s.Add(Clause::Of({Eq("total_seq", "past_seq + seq"), Eq("total_seq", "1")}));
  EXPECT_EQ(s.ToString(), "total_seq == past_seq + seq or total_seq == 1");
  EXPECT_EQ(s.Symbols(), (std::vector<std::string>{"past_seq", "seq", "total_seq"}));
  EXPECT_EQ(s.Evaluate({{"total_seq", 5}, {"past_seq", 2}, {"seq", 3}}), true);
  EXPECT_EQ(s.Evaluate({{"total_seq", 5}, {"past_seq", 2}, {"seq", 4}}), false);
  EXPECT_EQ(s.Evaluate({{"total_seq", 1}}), true);
  EXPECT_EQ(s.Evaluate({{"total_seq", 5}}), std::nullopt);
  // A lone symbol goes left of a compound side, a constant right.
  EXPECT_EQ(Atom::EqExpr(E("past + seq"), E("total")).ToString(), "total == past + seq");
  EXPECT_EQ(Atom::EqExpr(E("3"), E("H mod 4")).ToString(), "H mod 4 == 3");
}

TEST(ExprCondition, TwoSymbolsMatchBruteForce) {
  CheckAgainstBruteForce({Clause::Of({Eq("H", "W"), Eq("H", "1"), Eq("W", "1")}),
                          Clause::Of({Eq("W mod 3", "1")})},
                         40, true);
  CheckAgainstBruteForce({Clause::Of({Eq("H + W", "2*H"), Eq("W", "1")}),
                          Clause::Of({Eq("H", "5"), Eq("H", "7")})},
                         40, true);
  // Pinned and small finite sets decide multi-symbol atoms.
  ConditionSet s = CheckAgainstBruteForce(
      {Clause::InSet("H", {2, 3}), Clause::InSet("W", {5, 7}),
       Clause::Of({Eq("H + W", "10"), Eq("H*W", "21")})},
      40, true);
  EXPECT_EQ(s.ToString(), "H ∈ {2, 3} and W ∈ {5, 7} and (H + W == 10 or H*W == 21)");
  s = CheckAgainstBruteForce({Clause::InSet("H", {2, 3}), Clause::InSet("W", {5, 7}),
                              Clause::Of({Eq("H + W", "20"), Eq("W", "H")})},
                             40, true);
  EXPECT_TRUE(s.contradictory());
  s = CheckAgainstBruteForce({Clause::InSet("H", {2}), Clause::Of({Eq("W", "H + 1"),
                                                                   Eq("W", "1")})},
                             40, true);
  EXPECT_EQ(s.ToString(), "H == 2 and W ∈ {1, 3}");
}

TEST(ExprCondition, SymbolSetBasics) {
  SymbolSet even;
  even.period = 2;
  even.residues = {0};
  EXPECT_TRUE(even.Contains(4));
  EXPECT_FALSE(even.Contains(3));
  EXPECT_FALSE(even.Contains(0));
  EXPECT_EQ(even.ToString("H"), "H mod 2 == 0");
  EXPECT_EQ(SymbolSet::Finite({0, 1, 5}).ToString("N"), "N ∈ {1, 5}");
  EXPECT_TRUE(SymbolSet::Finite({}).empty());
  EXPECT_EQ(SymbolSet::All().ToString("N"), "true");
  EXPECT_EQ(even.Intersect(SymbolSet::Finite({1, 2, 3, 4}))->ToString("H"), "H ∈ {2, 4}");
  EXPECT_EQ(SymbolSet::Finite({4}).ToClause("weird name").ToString(), "`weird name` == 4");
}

}  // namespace
}  // namespace onnx_bcast::broadcast
