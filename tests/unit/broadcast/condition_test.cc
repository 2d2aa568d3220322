// ConditionSet: value-set intersection, contradictions, substitution of pinned
// symbols, duplicate removal and deterministic printing.
#include "broadcast/condition.h"

#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace onnx_bcast::bcast {
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
  EXPECT_EQ(set.contradiction(), "N ∈ {1, 5} and N ∈ {7} have no common value");
  EXPECT_EQ(set.ToString(), "false: N ∈ {1, 5} and N ∈ {7} have no common value");
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
  EXPECT_EQ(set.contradiction(), "N == M or N == 1 or M == 1 cannot hold given N == 5 and M == 7");
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
  EXPECT_EQ(set.ToString(), "Z ∈ {1, 3} and Y ∈ {1, 2} and A == B or A == 1 and C == D");
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
  EXPECT_EQ(c.contradiction(), "K ∈ {2} and K ∈ {3} have no common value");
}

TEST(Condition, SimplifyIsIdempotent) {
  ConditionSet set;
  set.Add(NMOr1());
  set.Add(Clause::InSet("K", {1, 4}));
  const std::string before = set.ToString();
  set.Simplify();
  set.Simplify();
  EXPECT_EQ(set.ToString(), before);
  EXPECT_EQ(before, "K ∈ {1, 4} and N == M or N == 1 or M == 1");
}

}  // namespace
}  // namespace onnx_bcast::bcast
