// `onnx-bcast check --dim` end to end: exit codes and one-line messages, the JSON evaluation,
// and, on the exporter corpus (tests/fixtures/exported), the issue-13 promise: at bindings
// derived from check's own combined condition, the executor (`run --dim`) runs a model exactly
// when `check --dim` says every node holds. No torch and no onnxruntime needed.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broadcast/expr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "tests/support/cli_process.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using report::Json;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Bindings = std::map<std::string, int64_t>;

const std::string kCheck = BCAST_SOURCE_DIR "/tests/fixtures/check/";
const std::string kCorpus = BCAST_SOURCE_DIR "/tests/fixtures/exported/";

test_support::CliResult RunCli(const std::vector<std::string>& args) {
  const fs::path dir =
      fs::temp_directory_path() / ("bcast_check_dims_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  test_support::CliResult r = test_support::RunCliIn(BCAST_CLI, args, dir.string());
  fs::remove_all(dir);
  return r;
}

std::vector<std::string> WithDims(std::vector<std::string> args, const Bindings& b) {
  for (const auto& [s, v] : b) {
    args.push_back("--dim");
    args.push_back(absl::StrCat(s, "=", v));
  }
  return args;
}

std::string Str(const Bindings& b) {
  std::string out;
  for (const auto& [s, v] : b) absl::StrAppend(&out, out.empty() ? "" : ", ", s, "=", v);
  return out;
}

Json CheckJson(const std::vector<std::string>& args) {
  std::vector<std::string> full = args;
  full.push_back("--json");
  full.push_back("-");
  test_support::CliResult r = RunCli(full);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  absl::StatusOr<Json> j = report::ParseJson(r.out);
  EXPECT_TRUE(j.ok()) << j.status() << r.out.substr(0, 400);
  return j.ok() ? *j : Json::object();
}

TEST(CheckDims, ExitOneNamesTheFirstFailingNodeInOneLine) {
  const std::string model = kCheck + "symbolic_batch.onnxtxt";
  test_support::CliResult r = RunCli({"check", model, "--dim", "N=3"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, model +
                       ": Add 'Add#0': A [3,3] and B [5,3] are not broadcastable (numpy "
                       "rule, axis 0: 3 vs 5)\n");
  EXPECT_THAT(r.out, HasSubstr("\nAt N=3: 1 fail, 0 hold, 0 still conditional, 0 unknown\n"));
  for (const char* ok : {"N=1", "N=5"}) {
    r = RunCli({"check", model, "--dim", ok});
    EXPECT_EQ(r.code, 0) << ok << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_THAT(r.out, HasSubstr("0 fail, 1 hold, 0 still conditional"));
    // Holding at the binding, the node is fine even with --strict.
    EXPECT_EQ(RunCli({"check", model, "--strict", "--dim", ok}).code, 0);
  }
}

TEST(CheckDims, UnboundSymbolsStayConditionalAndAreNamed) {
  const std::string model = kCheck + "golden_fpn_lateral.onnxtxt";
  test_support::CliResult r = RunCli({"check", model, "--dim", "H=4"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 still conditional (symbols not bound: W)"));
  EXPECT_EQ(RunCli({"check", model, "--dim", "H=4", "--strict"}).code, 1);
  // Binding only H already decides a failure.
  r = RunCli({"check", model, "--dim", "H=5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, StartsWith(model + ": Add 'Add#3': A [N,1,5,W] and B [N,1,6,"));
}

TEST(CheckDims, UsageErrorsExit64) {
  const std::string model = kCheck + "golden_fpn_lateral.onnxtxt";
  test_support::CliResult r = RunCli({"check", model, "--dim", "Q=3"});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(r.err, HasSubstr("the model has no symbol 'Q' (its symbols: H, N, W)"));
  EXPECT_EQ(r.out, "");
  for (const char* bad :
       {"H", "H=", "=3", "H=x", "H=0", "H=-2", "H=3.5", "H=99999999999999999999"}) {
    r = RunCli({"check", model, "--dim", bad});
    EXPECT_EQ(r.code, 64) << bad;
    EXPECT_THAT(r.err, HasSubstr("--dim")) << bad;
  }
  EXPECT_EQ(RunCli({"check", model, "--dim", "H=2", "--dim", "H=4"}).code, 64);
  EXPECT_THAT(RunCli({"help", "check"}).out, HasSubstr("--dim SYMBOL=N"));
}

TEST(CheckDims, JsonCarriesTheEvaluation) {
  Json j = CheckJson(
      {"check", kCorpus + "fpn_op16.onnx", "--dim", "H=17", "--dim", "W=32", "--dim", "N=1"});
  ASSERT_TRUE(j.contains("at_dims"));
  Json& at = j["at_dims"];
  EXPECT_EQ(at["fails"], 1);
  EXPECT_EQ(at["combined"], false);
  EXPECT_EQ(at["first_failure"]["node"], "/Add");
  EXPECT_THAT(at["first_failure"]["message"].get<std::string>(),
              HasSubstr("A [1,8,3,4] and B [1,8,4,4] are not broadcastable (numpy rule, axis 2"));
  Json& per = j["combined_condition"]["per_symbol"];
  for (const char* s : {"H", "W"}) {
    ASSERT_TRUE(per.contains(s)) << s;
    EXPECT_EQ(per[s]["imposed_by"].at(0)["node"], "/Add");
  }
}

// verify on the corpus: random samples inside the combined condition (the mask length is
// past + seq, or 1), and --edge-cases adds a binding outside it where both models fail.
TEST(VerifyConditions, SamplesSatisfyTheCorpusConditionsAndTheEdgeCaseFails) {
  const std::string gpt = kCorpus + "gpt_past_op14.onnx";
  test_support::CliResult r = RunCli({"verify", gpt, gpt, "--samples", "4", "--edge-cases"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  int samples = 0;
  for (size_t at = r.out.find("random sample "); at != std::string::npos;
       at = r.out.find("random sample ", at + 1)) {
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    std::map<std::string, int64_t> b;
    for (const char* s : {"past_seq", "seq", "total_seq"}) {
      const size_t p = line.find(std::string(" ") + s + "=");
      ASSERT_NE(p, std::string::npos) << line;
      b[s] = std::stoll(line.substr(p + strlen(s) + 2));
    }
    if (b["seq"] == 0) continue;  // the empty-tensor edge case
    ++samples;
    EXPECT_TRUE(b["total_seq"] == b["past_seq"] + b["seq"] || b["total_seq"] == 1) << line;
    EXPECT_THAT(line, HasSubstr(": equal"));
  }
  EXPECT_EQ(samples, 4);
  EXPECT_THAT(r.out, HasSubstr("edge case outside the broadcast condition ("));
  EXPECT_THAT(r.out, HasSubstr("): both fail\n"));
  const std::string fpn = kCorpus + "fpn_op11.onnx";
  r = RunCli({"verify", fpn, fpn, "--edge-cases"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("both models fail, as expected; check: Add '/Add'"));
}

// ---- The corpus: the model runs exactly where check --dim says it holds ----

// The truth of the combined condition from its JSON atoms (lhs == rhs over dim expressions,
// parsed back with Expr::Parse): the condition as data, evaluated independently of check.
std::optional<bool> EvalCondition(const Json& cond, const Bindings& b) {
  if (cond.is_null()) return true;
  bool unknown = false;
  for (const Json& clause : cond.at("clauses")) {
    bool any = false, clause_unknown = false;
    for (const Json& atom : clause) {
      const std::string l_text = atom.at("lhs"), r_text = atom.at("rhs");
      absl::StatusOr<broadcast::Expr> lhs = broadcast::Expr::Parse(l_text);
      absl::StatusOr<broadcast::Expr> rhs = broadcast::Expr::Parse(r_text);
      EXPECT_TRUE(lhs.ok() && rhs.ok()) << l_text << " == " << r_text;
      if (!lhs.ok() || !rhs.ok()) return std::nullopt;
      std::optional<int64_t> l = lhs->Evaluate(b), r = rhs->Evaluate(b);
      if (!l || !r) {
        clause_unknown = true;
      } else if (*l == *r) {
        any = true;
      }
    }
    if (any) continue;
    if (clause_unknown) {
      unknown = true;
    } else {
      return false;
    }
  }
  if (unknown) return std::nullopt;
  return true;
}

// Membership in a one-symbol set given as data (small values below threshold, then residues
// modulo period).
bool InSet(const Json& set, int64_t v) {
  if (v < set.at("threshold").get<int64_t>()) {
    for (const Json& s : set.at("small")) {
      if (s == v) return true;
    }
    return false;
  }
  const int64_t period = set.at("period");
  for (const Json& r : set.at("residues")) {
    if (r == v % period) return true;
  }
  return false;
}

struct ManifestModel {
  std::string name;
  std::set<std::string> symbols;  // of the inputs
  std::vector<Bindings> ok, fail;
};

std::vector<ManifestModel> LoadManifest() {
  absl::StatusOr<Json> m = report::ParseJson(test_support::ReadAll(kCorpus + "manifest.json"));
  EXPECT_TRUE(m.ok()) << m.status();
  std::vector<ManifestModel> out;
  if (!m.ok()) return out;
  for (const auto& [name, entry] : m->items()) {
    ManifestModel model;
    model.name = name;
    for (const auto& [input, axes] : entry.at("dynamic_axes").items()) {
      for (const auto& [axis, symbol] : axes.items())
        model.symbols.insert(symbol.get<std::string>());
    }
    auto read = [&model](const Json& list, std::vector<Bindings>* into) {
      for (const Json& b : list) {
        Bindings binding;
        bool in_domain = true;
        for (const auto& [s, v] : b.items()) {
          // "reason", and sizes the export fixed (ViT's H and W are static in the model).
          if (!v.is_number() || model.symbols.count(s) == 0) continue;
          binding[s] = v.get<int64_t>();
          in_domain &= binding[s] >= 1;  // symbols are extents >= 1 (an empty past is not)
        }
        if (in_domain) into->push_back(binding);
      }
    };
    read(entry.at("bindings_ok"), &model.ok);
    read(entry.at("bindings_fail"), &model.fail);
    out.push_back(std::move(model));
  }
  return out;
}

// check --dim and run --dim at `b`; returns whether check said it holds, after asserting that
// run agrees.
bool CheckAndRunAgree(const std::string& path, const Bindings& b) {
  const test_support::CliResult check = RunCli(WithDims({"check", path}, b));
  EXPECT_TRUE(check.code == 0 || check.code == 1) << Str(b) << ": " << check.err;
  const bool holds = check.code == 0;
  const test_support::CliResult run = RunCli(WithDims({"run", path}, b));
  EXPECT_EQ(run.code == 0, holds) << path << " at " << Str(b) << ": check says "
                                  << (holds ? "it holds" : check.err) << ", run exits " << run.code
                                  << ": " << run.err;
  if (!holds) {
    // The run fails at the node check names.
    const size_t q = check.err.find(": ");
    const std::string node = check.err.substr(q + 2, check.err.find(':', q + 2) - q - 2);
    EXPECT_THAT(run.err, HasSubstr(node)) << check.err;
  }
  return holds;
}

void PrintTo(const ManifestModel& m, std::ostream* os) { *os << m.name; }

class Corpus : public ::testing::TestWithParam<ManifestModel> {};

TEST_P(Corpus, RunsExactlyWhereCheckDimSaysItHolds) {
  const ManifestModel& m = GetParam();
  const std::string path = kCorpus + m.name + ".onnx";
  const Json j = CheckJson({"check", path});
  ASSERT_TRUE(j.contains("combined_condition"));
  const Json* cond = &j.at("combined_condition");
  std::set<std::string> symbols = m.symbols;
  if (!cond->is_null()) {
    for (const Json& s : cond->at("symbols")) symbols.insert(s.get<std::string>());
    // The exact one-symbol sets agree with the atoms that encode them.
    for (const auto& [symbol, set] : cond->at("sets").items()) {
      for (int64_t v = 1; v <= 64; ++v) {
        bool atoms = false;
        for (const Json& clause : cond->at("clauses")) {
          bool only_this = true;
          for (const Json& atom : clause) {
            for (const Json& s : atom.at("symbols")) only_this &= s == symbol;
          }
          if (!only_this) continue;
          std::optional<bool> t =
              EvalCondition(Json{{"clauses", Json::array({clause})}}, {{symbol, v}});
          atoms = t.value_or(false);
        }
        EXPECT_EQ(InSet(set, v), atoms) << m.name << " " << symbol << "=" << v;
      }
    }
  }
  // Bindings from the condition: a deterministic search over small extents, kept apart by
  // what the condition (as data) says; values of one-symbol sets are drawn from the sets.
  std::mt19937 gen(13);
  std::vector<Bindings> satisfying, violating;
  for (int tries = 0; tries < 4000 && (satisfying.size() < 3 || violating.size() < 3); ++tries) {
    Bindings b;
    for (const std::string& s : symbols) b[s] = 1 + static_cast<int64_t>(gen() % 24);
    const std::optional<bool> t = EvalCondition(*cond, b);
    ASSERT_TRUE(t.has_value()) << Str(b);
    std::vector<Bindings>& pool = *t ? satisfying : violating;
    if (pool.size() < 3) pool.push_back(b);
  }
  ASSERT_FALSE(satisfying.empty()) << m.name;
  const bool conditional = !cond->is_null();
  if (conditional) {
    ASSERT_FALSE(violating.empty()) << m.name << ": no binding violates " << cond->at("text");
  } else {
    satisfying.resize(1);  // one run for a model without conditions
  }
  for (const Bindings& b : satisfying) {
    EXPECT_TRUE(CheckAndRunAgree(path, b)) << m.name << " " << Str(b);
  }
  for (const Bindings& b : violating) {
    EXPECT_FALSE(CheckAndRunAgree(path, b)) << m.name << " " << Str(b);
  }
  // Where torch ran and where it raised (the manifest), check --dim and our executor agree.
  for (const Bindings& b : m.ok) EXPECT_TRUE(CheckAndRunAgree(path, b)) << Str(b);
  for (const Bindings& b : m.fail) EXPECT_FALSE(CheckAndRunAgree(path, b)) << Str(b);
}

INSTANTIATE_TEST_SUITE_P(Exported, Corpus, ::testing::ValuesIn(LoadManifest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace onnx_bcast
