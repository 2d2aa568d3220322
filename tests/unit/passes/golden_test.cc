// Golden tests of the rewrite passes, FileCheck style: each file in golden/ names a pass, an
// input model in ONNX text form and what must hold afterwards — `check` lines that must appear
// in order in the printed result, `check-not` substrings, `expect: no-change`, or
// `expect: error CODE` with the message substring. Every case that succeeds is run a second time
// to prove idempotence, and must pass libonnx's full check whenever its input does.
//
// File format:
//   # comment
//   pass: align-ranks
//   fold-limit: 0                      (optional; both the broadcast and the constant limit)
//   target: ncnn                       (optional: the target the pass works for)
//   live-wrong: Sub@3                  (optional: a scripted live oracle, see tests/support/pass_test_util.h)
//   differential: exact | 1e-5         (optional: our executor on input and result agree)
//   expect: change | no-change | error INVALID_ARGUMENT
//   error: substring of the message    (with expect: error)
//   === input
//   <ONNX text>
//   === check
//   lines, each a substring of a later line of the printed result
//   === check-not
//   substrings that must not appear
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/registry.h"
#include "proto/onnx_checks.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::passes {
namespace {

namespace fs = std::filesystem;
using test_support::GoldenForm;

const char kGoldenDir[] = BCAST_SOURCE_DIR "/tests/unit/passes/golden";

struct GoldenCase {
  std::string file;
  std::map<std::string, std::string> header;
  std::map<std::string, std::string> sections;
};

GoldenCase ReadCase(const std::string& path) {
  GoldenCase c;
  c.file = fs::path(path).filename().string();
  std::ifstream in(path);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      section = line.substr(4);
      c.sections[section];
      continue;
    }
    if (section.empty()) {
      if (line.empty() || line[0] == '#') continue;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      c.header[std::string(absl::StripAsciiWhitespace(line.substr(0, colon)))] =
          std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    } else {
      c.sections[section] += line + "\n";
    }
  }
  return c;
}

std::vector<std::string> GoldenFiles() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kGoldenDir)) {
    if (e.path().extension() == ".txt") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string CaseName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  for (char& ch : name) {
    if (!absl::ascii_isalnum(ch)) ch = '_';
  }
  return name;
}

// Every float output of `m` on our executor, with inputs seeded the same way each call (floats
// in [-1, 1), with infinities, -0 and a NaN written over the first elements of each float input
// so that exactness is shown on them too).
std::vector<std::vector<float>> RunSeeded(const proto::Model& m) {
  std::vector<std::vector<float>> out;
  absl::StatusOr<std::shared_ptr<const runtime::Model>> runtime = runtime::LoadRuntimeModel(m);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  if (!runtime.ok()) return out;
  runtime::RandomInputOptions o;
  o.seed = 5;
  absl::StatusOr<runtime::Feeds> feeds = runtime::RandomInputs(*(*runtime)->main, o);
  EXPECT_TRUE(feeds.ok()) << feeds.status();
  if (!feeds.ok()) return out;
  for (auto& [name, v] : *feeds) {
    if (v.tensor->dtype() != runtime::DType::kFloat32) continue;
    absl::Span<float> x = v.tensor->values<float>();
    const float specials[] = {INFINITY, -INFINITY, -0.0f, NAN};
    for (size_t i = 0; i < x.size() && i < 4; ++i) x[i] = specials[i];
  }
  absl::StatusOr<std::unique_ptr<runtime::Executor>> exec = runtime::Executor::Create(*runtime);
  EXPECT_TRUE(exec.ok()) << exec.status();
  if (!exec.ok()) return out;
  absl::StatusOr<std::vector<runtime::Value>> values = (*exec)->Run(*feeds);
  EXPECT_TRUE(values.ok()) << values.status();
  if (!values.ok()) return out;
  for (const runtime::Value& v : *values) {
    if (v.kind != runtime::Value::Kind::kTensor || v.tensor->dtype() != runtime::DType::kFloat32) continue;
    const absl::Span<const float> x = v.tensor->values<float>();
    out.emplace_back(x.begin(), x.end());
  }
  return out;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, Matches) {
  const GoldenCase c = ReadCase(GetParam());
  ASSERT_TRUE(c.header.count("pass")) << c.file << ": no 'pass:' header";
  ASSERT_TRUE(c.sections.count("input")) << c.file << ": no '=== input' section";
  const std::string pass = c.header.at("pass");
  const std::string expect = c.header.count("expect") ? c.header.at("expect") : "change";
  PassOptions options;
  if (c.header.count("fold-limit")) {
    ASSERT_TRUE(absl::SimpleAtoi(c.header.at("fold-limit"), &options.fold_limit_bytes));
    options.constant_fold_limit_bytes = options.fold_limit_bytes;
  }
  // The target a pass works for: `target: NAME` in the header; `legalize` reads ncnn's table
  // by default. Other passes run as `--passes` runs them, without a target.
  if (c.header.count("target")) {
    options.target = targets::FindTarget(c.header.at("target"));
    ASSERT_NE(options.target, nullptr) << c.file << ": unknown target";
  } else if (pass == "legalize") {
    options.target = targets::FindTarget("ncnn");
  }
  // `live-wrong: Sub@3, ...`: decided by a scripted live oracle (tests/support/pass_test_util.h) for which those
  // forms compute wrongly and every other form runs and matches.
  std::optional<test_support::ScriptedOracle> oracle;
  if (c.header.count("live-wrong")) {
    std::vector<std::string> wrong;
    for (absl::string_view w : absl::StrSplit(c.header.at("live-wrong"), ',', absl::SkipEmpty())) {
      wrong.emplace_back(absl::StripAsciiWhitespace(w));
    }
    oracle.emplace(std::move(wrong));
    options.live = &*oracle;
  }
  proto::Model model = test_support::Parse(c.sections.at("input"));
  const proto::Model original = model;
  PassStats stats;
  const absl::Status status = test_support::RunPass(pass, &model, &stats, options);
  if (expect.rfind("error", 0) == 0) {
    const std::string code = std::string(absl::StripAsciiWhitespace(expect.substr(5)));
    ASSERT_FALSE(status.ok()) << c.file << ": expected an error, got\n" << GoldenForm(model.proto);
    EXPECT_EQ(absl::StatusCodeToString(status.code()), code) << c.file << ": " << status;
    if (c.header.count("error")) {
      EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(c.header.at("error")))
          << c.file;
    }
    return;
  }
  ASSERT_TRUE(status.ok()) << c.file << ": " << status;
  const std::string printed = GoldenForm(model.proto);
  std::string diff;
  if (expect == "no-change") {
    EXPECT_TRUE(proto::ModelsEqual(original.proto, model.proto, &diff))
        << c.file << ": expected no change\n"
        << diff << printed;
    EXPECT_TRUE(stats.log.empty()) << c.file;
  } else {
    EXPECT_FALSE(proto::ModelsEqual(original.proto, model.proto)) << c.file << ": nothing changed";
    EXPECT_FALSE(stats.log.empty()) << c.file;
  }
  if (c.sections.count("check")) {
    const std::vector<std::string> lines = absl::StrSplit(printed, '\n');
    size_t at = 0;
    for (absl::string_view want : absl::StrSplit(c.sections.at("check"), '\n')) {
      const std::string w(absl::StripAsciiWhitespace(want));
      if (w.empty()) continue;
      while (at < lines.size() && lines[at].find(w) == std::string::npos) ++at;
      ASSERT_LT(at, lines.size()) << c.file << ": check line not found (in order): " << w
                                  << "\n--- got:\n"
                                  << printed;
      ++at;
    }
  }
  if (c.sections.count("check-not")) {
    for (absl::string_view bad : absl::StrSplit(c.sections.at("check-not"), '\n')) {
      const std::string b(absl::StripAsciiWhitespace(bad));
      if (b.empty()) continue;
      EXPECT_EQ(printed.find(b), std::string::npos)
          << c.file << ": must not appear: " << b << "\n--- got:\n"
          << printed;
    }
  }
  // libonnx's full check holds afterwards whenever it held before.
  if (proto::CheckModel(original, /*full=*/true).ok()) {
    EXPECT_TRUE(proto::CheckModel(model, /*full=*/true).ok())
        << c.file << ": " << proto::CheckModel(model, true) << "\n"
        << printed;
  }
  // `differential: exact` (bit for bit) or `differential: 1e-5` (relative): our executor on
  // the input and on the result, with the same seeded inputs.
  if (c.header.count("differential")) {
    const std::string how = c.header.at("differential");
    double tolerance = 0;
    ASSERT_TRUE(how == "exact" || absl::SimpleAtod(how, &tolerance)) << c.file;
    const std::vector<std::vector<float>> want = RunSeeded(original);
    const std::vector<std::vector<float>> got = RunSeeded(model);
    ASSERT_EQ(want.size(), got.size()) << c.file;
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(want[k].size(), got[k].size()) << c.file;
      for (size_t i = 0; i < want[k].size(); ++i) {
        if (how == "exact") {
          ASSERT_EQ(std::memcmp(&want[k][i], &got[k][i], sizeof(float)), 0)
              << c.file << ": output " << k << " element " << i << ": " << want[k][i] << " vs "
              << got[k][i];
        } else if (!(std::isnan(want[k][i]) && std::isnan(got[k][i]))) {
          ASSERT_NEAR(want[k][i], got[k][i], tolerance * (1 + std::fabs(want[k][i])))
              << c.file << ": output " << k << " element " << i;
        }
      }
    }
  }
  // Idempotence: a second run changes nothing.
  const proto::Model once = model;
  PassStats again;
  ASSERT_TRUE(test_support::RunPass(pass, &model, &again, options).ok()) << c.file;
  EXPECT_TRUE(proto::ModelsEqual(once.proto, model.proto, &diff))
      << c.file << ": second run changed the model\n"
      << diff;
  EXPECT_TRUE(again.log.empty()) << c.file << ": second run logged " << again.log.size();
}

INSTANTIATE_TEST_SUITE_P(Passes, GoldenTest, ::testing::ValuesIn(GoldenFiles()), CaseName);

// Every registered pass has a golden change case, a no-change case and an error (or refusal)
// case.
TEST(GoldenCoverage, EveryPassHasChangeNoChangeAndInvalidCases) {
  std::map<std::string, std::set<std::string>> kinds;
  for (const std::string& file : GoldenFiles()) {
    const GoldenCase c = ReadCase(file);
    const std::string expect = c.header.count("expect") ? c.header.at("expect") : "change";
    kinds[c.header.count("pass") ? c.header.at("pass") : ""].insert(
        expect.rfind("error", 0) == 0 ? "error" : expect);
  }
  for (const PassInfo& info : AllPasses()) {
    if (std::string(info.name) == "legalize") continue;  // legalize-ncnn's code, tested there
    EXPECT_TRUE(kinds[info.name].count("change")) << info.name;
    EXPECT_TRUE(kinds[info.name].count("no-change")) << info.name;
    EXPECT_TRUE(kinds[info.name].count("error")) << info.name << ": no invalid case";
  }
}

}  // namespace
}  // namespace onnx_bcast::passes
