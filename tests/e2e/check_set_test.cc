// `onnx-bcast check MODEL|DIR ...` over many models (issue 25): folder search without
// following symlinks out, one summary line per model in a stable order and a total, the worst
// exit code, -j, the set's JSON, JUnit and SARIF 2.1.0 (its required fields checked by hand),
// and a baseline that accepts known findings but not new ones.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "tests/support/cli_process.h"
#include "tests/support/json_file.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using report::Json;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSource = BCAST_SOURCE_DIR;

using test_support::ReadJson;

class Zoo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("bcast_check_set_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "zoo" / "sub");
    fs::copy_file(kSource + "/models/cnn_block.onnx", dir_ / "zoo" / "good.onnx");
    fs::copy_file(kSource + "/tests/fixtures/check/gemm_bad_c.onnxtxt",
                  dir_ / "zoo" / "sub" / "bad_gemm.onnxtxt");
    fs::copy_file(kSource + "/tests/fixtures/check/symbolic_batch.onnxtxt",
                  dir_ / "zoo" / "sub" / "conditional.onnxtxt");
    std::ofstream(dir_ / "zoo" / "notes.txt") << "not a model\n";
    // A model outside the folder, linked from inside: never followed out.
    fs::copy_file(kSource + "/tests/fixtures/check/if_branch_conflict.onnxtxt",
                  dir_ / "outside.onnxtxt");
    fs::create_symlink(dir_ / "outside.onnxtxt", dir_ / "zoo" / "link_out.onnxtxt");
    fs::create_directory_symlink(dir_, dir_ / "zoo" / "loop");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  test_support::CliResult Run(std::vector<std::string> args) const {
    args.insert(args.begin(), "check");
    return test_support::RunCliIn(BCAST_CLI, args, dir_.string());
  }
  fs::path dir_;
};

TEST_F(Zoo, FolderGivesOneLinePerModelSortedAndTheWorstExit) {
  const test_support::CliResult r = Run({Path("zoo")});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  std::vector<std::string> heads;
  for (const std::string& l : lines) {
    if (l.rfind("  ", 0) != 0) heads.push_back(l.substr(0, l.find(':')));
  }
  // Sorted, the symlink out of the folder and the linked folder left out, the total last.
  ASSERT_EQ(heads.size(), 4u) << r.out;
  EXPECT_EQ(heads[0], Path("zoo/good.onnx"));
  EXPECT_EQ(heads[1], Path("zoo/sub/bad_gemm.onnxtxt"));
  EXPECT_EQ(heads[2], Path("zoo/sub/conditional.onnxtxt"));
  EXPECT_THAT(lines.back(), HasSubstr("3 models: 2 pass, 1 fail, 0 unreadable"));
  EXPECT_THAT(r.out, HasSubstr("  error: Gemm 'Gemm#0': C [7] is not unidirectionally"));
  EXPECT_THAT(r.out, Not(HasSubstr("outside")));
  // --strict counts the condition too; -j 1 gives the same text.
  const test_support::CliResult strict = Run({Path("zoo"), "--strict", "-j", "1"});
  EXPECT_EQ(strict.code, 1);
  EXPECT_THAT(strict.out, HasSubstr("3 models: 1 pass, 2 fail"));
  const test_support::CliResult serial = Run({Path("zoo"), "-j", "1"});
  EXPECT_EQ(serial.out, r.out);
}

TEST_F(Zoo, UnreadableModelIsExitTwoAndAJUnitError) {
  std::ofstream(dir_ / "zoo" / "broken.onnx") << "garbage";
  const test_support::CliResult r =
      Run({Path("zoo"), "--junit", Path("j.xml"), "--json", Path("set.json")});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("broken.onnx: not a valid ONNX model"));
  const std::string xml = test_support::ReadAll(Path("j.xml"));
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"onnx-bcast check\" tests=\"4\" failures=\"1\" "
                             "errors=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<error type=\"model-unreadable\""));
  EXPECT_THAT(xml, HasSubstr("<failure type=\"broadcast-error\""));
  EXPECT_THAT(xml, HasSubstr("C [7] is not unidirectionally broadcastable"));
  size_t cases = 0;
  for (size_t at = xml.find("<testcase "); at != std::string::npos;
       at = xml.find("<testcase ", at + 1)) {
    ++cases;
  }
  EXPECT_EQ(cases, 4u);
  // What a test reporter sees: Python's XML parser reads the file, and each testcase carries
  // its model's outcome as the element JUnit readers count.
  const test_support::CliResult parsed = test_support::RunCliIn(
      "/usr/bin/python3",
      {"-c",
       "import sys, xml.etree.ElementTree as ET\n"
       "root = ET.parse(sys.argv[1]).getroot()\n"
       "for case in root.iter('testcase'):\n"
       "    kinds = [c.tag for c in case if c.tag in ('failure', 'error')]\n"
       "    print(case.get('name').rsplit('/', 1)[-1], ':'.join(kinds) or 'pass')\n",
       Path("j.xml")},
      dir_.string());
  EXPECT_EQ(parsed.code, 0) << parsed.err;
  EXPECT_EQ(parsed.out,
            "broken.onnx error\ngood.onnx pass\nbad_gemm.onnxtxt failure\n"
            "conditional.onnxtxt pass\n");
  const Json set = ReadJson(Path("set.json"));
  EXPECT_EQ(set["kind"], "check-set");
  ASSERT_EQ(set["models"].size(), 4u);
  EXPECT_THAT(set["models"][0]["error"].get<std::string>(), HasSubstr("not a valid ONNX"));
  EXPECT_EQ(set["summary"]["unreadable"], 1);
  EXPECT_EQ(set["summary"]["exit"], 2);
  // Each readable model's entry is its single-model check document.
  EXPECT_EQ(set["models"][1]["kind"], "check");
}

// SARIF 2.1.0's required fields, checked by hand: version, runs[].tool.driver.name, each
// rule's id, each result's message.text and a location naming the model and the node.
TEST_F(Zoo, SarifHasTheRequiredFieldsOneRulePerKindAndLevels) {
  const test_support::CliResult r = Run({Path("zoo"), "--lint", "--sarif", "-"});
  EXPECT_EQ(r.code, 1) << r.err;
  absl::StatusOr<Json> doc = report::ParseJson(r.out);
  ASSERT_TRUE(doc.ok()) << doc.status() << r.out;
  EXPECT_EQ((*doc)["version"], "2.1.0");
  ASSERT_EQ((*doc)["runs"].size(), 1u);
  const Json& run = (*doc)["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "onnx-bcast");
  std::set<std::string> rules;
  for (const Json& rule : run["tool"]["driver"]["rules"]) {
    ASSERT_TRUE(rule["id"].is_string());
    EXPECT_TRUE(rule["shortDescription"]["text"].is_string());
    EXPECT_TRUE(rule["help"]["text"].is_string());
    rules.insert(rule["id"].get<std::string>());
  }
  EXPECT_TRUE(rules.count("broadcast-error") && rules.count("conditional-broadcast") &&
              rules.count("unknown-shape") && rules.count("model-unreadable"));
  std::set<std::string> levels;
  for (const Json& result : run["results"]) {
    EXPECT_TRUE(rules.count(result["ruleId"].get<std::string>())) << result.dump();
    EXPECT_TRUE(result["message"]["text"].is_string());
    levels.insert(result["level"].get<std::string>());
    const Json& loc = result["locations"][0];
    EXPECT_THAT(loc["physicalLocation"]["artifactLocation"]["uri"].get<std::string>(),
                HasSubstr("zoo/"));
    EXPECT_TRUE(loc["logicalLocations"][0]["fullyQualifiedName"].is_string());
  }
  EXPECT_TRUE(levels.count("error"));    // the Gemm
  EXPECT_TRUE(levels.count("warning"));  // the condition
  for (const std::string& l : levels) EXPECT_TRUE(l == "error" || l == "warning" || l == "note");
}

TEST_F(Zoo, BaselineAcceptsKnownFindingsNotNewOnes) {
  ASSERT_EQ(Run({Path("zoo"), "--json", Path("base.json"), "-q"}).code, 1);
  test_support::CliResult r = Run({Path("zoo"), "--baseline", Path("base.json"), "--strict"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("  known error: Gemm 'Gemm#0'"));
  EXPECT_THAT(r.out, HasSubstr("2 findings known to the baseline"));
  // A model added since: its finding is new, and the node is named by its path.
  fs::copy_file(kSource + "/tests/fixtures/check/if_branch_conflict.onnxtxt",
                dir_ / "zoo" / "added.onnxtxt");
  r = Run({Path("zoo"), "--baseline", Path("base.json")});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("  new error: Add 'If#0/then/Add#0'"));
  // A baseline that is not a check report is refused.
  std::ofstream(Path("bogus.json")) << "{\"kind\": \"opt\"}";
  r = Run({Path("zoo"), "--baseline", Path("bogus.json")});
  EXPECT_EQ(r.code, 64) << r.err;
  EXPECT_THAT(r.err, HasSubstr("not a `check --json` document"));
}

TEST_F(Zoo, UsageErrors) {
  EXPECT_EQ(Run({Path("zoo"), "--annotate", "-o", Path("o.onnx")}).code, 64);
  EXPECT_EQ(Run({Path("zoo"), "-v"}).code, 64);
  EXPECT_EQ(Run({Path("zoo"), "--json", "-", "--sarif", "-"}).code, 64);
  EXPECT_EQ(Run({Path("zoo/good.onnx"), "-j", "2"}).code, 64);
  const test_support::CliResult empty = Run({Path("zoo/sub"), Path("zoo/notes.txt")});
  EXPECT_EQ(empty.code, 2);  // notes.txt is named, so checked, and is no model
}

}  // namespace
}  // namespace onnx_bcast
