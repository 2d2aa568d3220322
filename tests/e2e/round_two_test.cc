// A new user's second round (issue 44): opt's report on a refusal, outputs refused before any
// pass runs, verify listing the samples it skips, value ranges for random inputs, the engine
// check's dims on a GoogLeNet-like export, messages (run's label, opt -q, the hints' counts,
// what a normal form covers), and CI output (baselines however the models are named, SARIF
// regions and fingerprints, check DIR --progress).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "report/report_json.h"
#include "tests/support/cli_process.h"
#include "tests/support/json_file.h"
#include "tests/support/temp_dir.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using report::Json;
using ::testing::HasSubstr;
using ::testing::Not;
using Result = test_support::CliResult;
using test_support::ReadJson;

const std::string kSource = BCAST_SOURCE_DIR;
const std::string kNewcomer = kSource + "/tests/fixtures/newcomer/";
const std::string kUnet = kNewcomer + "unet_skip_op13.onnx";
const std::string kGoogLeNet = kNewcomer + "googlenet_like_op13.onnx";
const std::string kUnknownRank = kSource + "/tests/fixtures/opt/unknown_rank.onnxtxt";
const std::string kSymbolicBatch = kSource + "/tests/fixtures/check/symbolic_batch.onnxtxt";
const std::string kGemmBad = kSource + "/tests/fixtures/check/gemm_bad_c.onnxtxt";
const std::string kCnn = kSource + "/models/cnn_block.onnx";

class RoundTwo : public test_support::TempDirTest {
 protected:
  Result Cli(const std::vector<std::string>& args) {
    return test_support::RunCliIn(BCAST_CLI, args, dir_);
  }
  // The CLI run with `cwd` as its working directory (relative paths as a user types them).
  Result CliIn(const std::string& cwd, const std::vector<std::string>& args) {
    const std::string out = Path("cwd.out"), err = Path("cwd.err");
    // What this process has buffered must not be flushed again by the child.
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::chdir(cwd.c_str()) != 0 || std::freopen(out.c_str(), "w", stdout) == nullptr ||
          std::freopen(err.c_str(), "w", stderr) == nullptr) {
        ::_exit(126);
      }
      test_support::ExecCli(BCAST_CLI, args);
    }
    Result r;
    r.code = test_support::WaitExitCode(pid);
    r.out = test_support::ReadAll(out);
    r.err = test_support::ReadAll(err);
    return r;
  }
  void Write(const std::string& name, const std::string& text) {
    fs::create_directories(fs::path(Path(name)).parent_path());
    std::ofstream(Path(name)) << text;
  }
};

// --- item 1: the report when opt refuses ---------------------------------------------------

TEST_F(RoundTwo, OptWritesItsReportWhenTheTargetIsNotMet) {
  const Result r = Cli({"opt", kUnknownRank, "-o", Path("out.onnx"), "--target", "ncnn", "--report",
                        Path("r.json")});
  ASSERT_EQ(r.code, 3) << r.err;
  EXPECT_FALSE(fs::exists(Path("out.onnx")));
  const Json report = ReadJson(Path("r.json"));
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["refused"]["exit"], 3);
  EXPECT_EQ(report["refused"]["why"], "target ncnn not met: 2 node(s) not in its form");
  ASSERT_EQ(report["violation_details"].size(), 2u);
  EXPECT_EQ(report["summary"]["violations"].size(), 2u);
  EXPECT_EQ(report["violation_details"][1]["node"], "Reshape#0");
  EXPECT_TRUE(report["violation_details"][1].contains("hint"));

  // '-': the JSON alone on stdout, the text on stderr.
  const Result dash =
      Cli({"opt", kUnknownRank, "-o", Path("out.onnx"), "--target", "ncnn", "--report", "-"});
  ASSERT_EQ(dash.code, 3);
  absl::StatusOr<Json> doc = report::ParseJson(dash.out);
  ASSERT_TRUE(doc.ok()) << dash.out;
  EXPECT_EQ((*doc)["refused"]["exit"], 3);
  EXPECT_THAT(dash.err, HasSubstr("target ncnn not met"));
}

TEST_F(RoundTwo, OptWritesItsReportWhenADimBreaksABroadcast) {
  const Result r = Cli(
      {"opt", kSymbolicBatch, "-o", Path("out.onnx"), "--dim", "N=3", "--report", Path("r.json")});
  ASSERT_EQ(r.code, 1) << r.err;
  const Json report = ReadJson(Path("r.json"));
  EXPECT_EQ(report["refused"]["exit"], 1);
  EXPECT_THAT(report["refused"]["why"].get<std::string>(), HasSubstr("Add 'Add#0'"));
}

// --- item 3: outputs refused before any pass runs --------------------------------------------

TEST_F(RoundTwo, OptRefusesAnOutputItCannotWriteBeforeAnyPass) {
  Result r = Cli({"opt", kCnn, "-o", Path("w/missing/x.onnx"), "--progress"});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.out, "");  // no report that reads as success
  EXPECT_THAT(r.err, HasSubstr(Path("w/missing/x.onnx") + ": output directory '" +
                               Path("w/missing") + "' does not exist"));
  EXPECT_THAT(r.err, Not(HasSubstr("[I] pass")));
  // A folder that is a file, and a --report in a missing folder.
  Write("file", "x");
  r = Cli({"opt", kCnn, "-o", Path("file/x.onnx")});
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("is not a directory"));
  EXPECT_EQ(r.out, "");
  r = Cli({"opt", kCnn, "-o", Path("x.onnx"), "--report", Path("missing/r.json")});
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr(Path("missing/r.json") + ": output directory '" + Path("missing") +
                               "' does not exist"));
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(Path("x.onnx")));
}

// --- item 4: verify says which samples it skipped and why -------------------------------------

TEST_F(RoundTwo, VerifyListsTheSamplesTheOriginalRejects) {
  ASSERT_EQ(Cli({"opt", kUnet, "-o", Path("unet.onnx"), "-q"}).code, 0);
  Result r = Cli({"verify", kUnet, Path("unet.onnx"), "--edge-cases", "--json", Path("v.json")});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // H = W = 1 is inside the broadcast condition, and the original's Concat fails there.
  EXPECT_THAT(r.out, HasSubstr("  random sample 0 (H=1, N=1, W=1): skipped: the original "
                               "rejects these inputs: Concat '/Concat': cannot concatenate"));
  EXPECT_THAT(r.out, HasSubstr("  edge case: every dim 0 (H=0, N=0, W=0; empty tensors): "));
  EXPECT_THAT(r.out, Not(HasSubstr("random sample 3")));
  const Json v = ReadJson(Path("v.json"));
  EXPECT_EQ(v["samples"][0]["skipped"], true);
  EXPECT_EQ(v["samples"][1]["skipped"], false);
}

// --- item 5: value ranges of random inputs ------------------------------------------------------

std::vector<double> TensorValues(const std::string& path) {
  onnx::TensorProto t;
  EXPECT_TRUE(t.ParseFromString(test_support::ReadAll(path))) << path;
  std::vector<double> out;
  if (t.data_type() == onnx::TensorProto::INT64) {
    const std::string& raw = t.raw_data();
    for (size_t k = 0; k + 8 <= raw.size(); k += 8) {
      int64_t v;
      std::memcpy(&v, raw.data() + k, 8);
      out.push_back(static_cast<double>(v));
    }
    for (int64_t v : t.int64_data()) out.push_back(static_cast<double>(v));
  } else {
    const std::string& raw = t.raw_data();
    for (size_t k = 0; k + 4 <= raw.size(); k += 4) {
      float v;
      std::memcpy(&v, raw.data() + k, 4);
      out.push_back(v);
    }
    for (float v : t.float_data()) out.push_back(v);
  }
  return out;
}

constexpr char kIdentity[] = R"(<ir_version: 8, opset_import: ["" : 15]>
g (int64[N,6] ids, float[N,6] mask, float[N,6] x) => (int64[N,6] a, float[N,6] b, float[N,6] c) {
  a = Identity(ids)
  b = Identity(mask)
  c = Identity(x)
}
)";

TEST_F(RoundTwo, RunTakesValueRangesOfRandomInputs) {
  Write("m.onnxtxt", kIdentity);
  const Result r =
      Cli({"run", Path("m.onnxtxt"), "--dim", "N=40", "--input-range", "ids=3:4", "--input-range",
           "mask=0:1:int", "--input-range", "x=0.25:0.5", "--output-dir", Path("out")});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<double> ids = TensorValues(Path("out/output_0.pb"));
  const std::vector<double> mask = TensorValues(Path("out/output_1.pb"));
  const std::vector<double> x = TensorValues(Path("out/output_2.pb"));
  ASSERT_EQ(ids.size(), 240u);
  // Both ends of an integer range, nothing else.
  EXPECT_EQ(std::set<double>(ids.begin(), ids.end()), (std::set<double>{3, 4}));
  // A float mask of exactly 0 and 1 (LO:HI:int).
  EXPECT_EQ(std::set<double>(mask.begin(), mask.end()), (std::set<double>{0, 1}));
  for (double v : x) {
    EXPECT_GE(v, 0.25);
    EXPECT_LE(v, 0.5);
  }
  EXPECT_GT(std::set<double>(x.begin(), x.end()).size(), 100u);  // floats, not whole numbers
}

TEST_F(RoundTwo, AValueRangeAModelCannotTakeIsAUsageError) {
  Write("m.onnxtxt", kIdentity);
  Result r = Cli({"run", Path("m.onnxtxt"), "--input-range", "idz=0:4"});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(r.err, HasSubstr("--input-range idz=0:4: the model has no input 'idz' (its inputs: "
                               "ids, mask, x)"));
  r = Cli({"run", Path("m.onnxtxt"), "--input-range", "ids=0.5:4"});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(r.err, HasSubstr("'ids' is int64, which takes whole numbers"));
  r = Cli({"run", Path("m.onnxtxt"), "--input-range", "ids=4:0"});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(r.err, HasSubstr("LO is above HI"));
  // opt checks its ranges before any pass runs; verify against the original's inputs.
  r = Cli({"opt", Path("m.onnxtxt"), "-o", Path("o.onnx"), "--input-range", "idz=0:4"});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(r.err, HasSubstr("--input-range idz=0:4: the model has no input 'idz'"));
  r = Cli({"verify", Path("m.onnxtxt"), Path("m.onnxtxt"), "--input-range", "idz=0:4"});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(r.err, HasSubstr("--input-range idz=0:4"));
}

// Two models that agree only on x >= 0: verify finds them equal exactly when the range says so.
TEST_F(RoundTwo, VerifyFeedsTheRangeToBothModels) {
  Write("relu.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[N,8] x) => (float[N,8] y) {
  y = Relu(x)
}
)");
  Write("id.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[N,8] x) => (float[N,8] y) {
  y = Identity(x)
}
)");
  EXPECT_EQ(Cli({"verify", Path("relu.onnxtxt"), Path("id.onnxtxt")}).code, 1);
  const Result r =
      Cli({"verify", Path("relu.onnxtxt"), Path("id.onnxtxt"), "--input-range", "x=0:1"});
  EXPECT_EQ(r.code, 0) << r.out;
}

// --- item 6: the engine check's dims on a GoogLeNet-like export ----------------------------------

#ifdef BCAST_HAVE_OPENCV
TEST_F(RoundTwo, EngineCheckSaysTheDimsItChoseAndRunsAt32Pixels) {
  Result r = Cli(
      {"opt", kGoogLeNet, "-o", Path("g.onnx"), "--target", "opencv", "--report", Path("r.json")});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("(at H=32, N=1, W=32 (H, N, W unbound: chosen by opt))"));
  EXPECT_THAT(r.err, HasSubstr("its inputs keep the symbolic dims H, N, W, which the engine ran "
                               "at the values above: bind them with --dim"));
  const Json report = ReadJson(Path("r.json"));  // the refusal's report (item 1)
  EXPECT_EQ(report["refused"]["exit"], 1);
  // OpenCV 4.6 on input dims it sees unbound reads shapes it never set: it refuses, or dies of
  // SIGFPE, depending on the process's memory; either way not a model to write.
  EXPECT_TRUE(report["engine"]["outcome"] == "refused" || report["engine"]["outcome"] == "crashed")
      << report["engine"];
  // Bound at the dims it chose, the written model runs on OpenCV.
  r = Cli(
      {"opt", kGoogLeNet, "-o", Path("g.onnx"), "--target", "opencv", "--dim", "N=1,H=32,W=32"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("opencv: runs, max abs"));
  EXPECT_THAT(r.out, HasSubstr("(at H=32, N=1, W=32)"));
}
#endif

// --- item 7: messages ---------------------------------------------------------------------------

TEST_F(RoundTwo, RunLabelsGivenInputsAsGiven) {
  Write("relu.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[2] x, float[2] z) => (float[2] y, float[2] w) {
  y = Relu(x)
  w = Relu(z)
}
)");
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.add_float_data(1);
  t.add_float_data(-1);
  std::ofstream(Path("x.pb")) << t.SerializeAsString();
  Result r = Cli({"run", Path("relu.onnxtxt"), "--input", "x=" + Path("x.pb"), "--input",
                  "z=" + Path("x.pb")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("given inputs: output 'y'"));
  EXPECT_THAT(r.out, Not(HasSubstr("random")));
  r = Cli({"run", Path("relu.onnxtxt"), "--input", "x=" + Path("x.pb")});
  EXPECT_THAT(r.out, HasSubstr("given and random inputs: output 'y'"));
}

TEST_F(RoundTwo, QuietOptPrintsNothingOnSuccessButWarnings) {
  Result r = Cli({"opt", kCnn, "-o", Path("o.onnx"), "-q"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  // Warnings and refusals still say what they are.
  Write("nolayer.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[B,4] x, float[B,1] y, float[B,1] w) => (float[B,4] z) {
  s = Shape(x)
  e = Expand(y, s)
  a = Add(x, e)
  c = Mul(a, w)
  z = Sub(c, y)
}
)");
  r = Cli({"opt", Path("nolayer.onnxtxt"), "-o", Path("n.onnx"), "--target", "ncnn", "-q",
           "--no-live-probe"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("warning: ncnn has no layer for Expand (1 node(s))"));
  // The shared hint counts the two nodes a binding of B can place, not Shape and Expand.
  EXPECT_THAT(r.err, HasSubstr("bind B with --dim: 2 nodes"));
  EXPECT_THAT(r.err, HasSubstr("ncnn has no layer for Expand: no --dim makes it run"));
}

TEST_F(RoundTwo, AKeptBoolConstantIsNotAskedToBeFoldedWithALargerLimit) {
  Write("b.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[2,3] x, float[2,3] y) => (float[2,3] z) <float[3] a = {1.0, 5.0, 2.0}, float[3] b = {2.0, 3.0, 4.0}> {
  m = Less(a, b)
  z = Where(m, x, y)
}
)");
  const Result r = Cli({"opt", Path("b.onnxtxt"), "-o", Path("o.onnx"), "--target", "opencv",
                        "--no-live-probe", "--no-verify-engine"});
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("Less 'Less#0': [3] and [3]: has only constant inputs; "
                               "fold-constants kept it: its constant result 'm' has type bool, "
                               "which opencv does not load as a constant"));
  EXPECT_THAT(r.err, Not(HasSubstr("--fold-limit")));
}

TEST_F(RoundTwo, ANormalFormTargetSaysItIsNoEngine) {
  const Result r = Cli({"opt", kCnn, "-o", Path("o.onnx")});
  ASSERT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("target explicit covers broadcast forms only (a normal form of "
                               "ONNX, not an engine: every op stays as ONNX defines it)\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("whether explicit has a layer")));
}

// --- item 8: CI ---------------------------------------------------------------------------------

class Baselines : public RoundTwo {
 protected:
  void SetUp() override {
    RoundTwo::SetUp();
    fs::create_directories(Path("repo/zoo"));
    fs::create_directories(Path("repo/ci"));
    fs::create_directories(Path("repo/sub"));
    fs::copy_file(kGemmBad, Path("repo/zoo/gemm_bad_c.onnxtxt"));
    fs::copy_file(kSymbolicBatch, Path("repo/zoo/symbolic_batch.onnxtxt"));
    // Made as a user makes it: in the repository, naming the folder relatively.
    ASSERT_EQ(CliIn(Path("repo"), {"check", "zoo/", "--json", "ci/base.json", "-q"}).code, 1);
  }
  void ExpectKnown(const Result& r) {
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("2 findings known to the baseline"));
    EXPECT_THAT(r.err, Not(HasSubstr("warning")));
  }
};

TEST_F(Baselines, MatchHoweverTheModelsAreNamed) {
  ExpectKnown(CliIn(Path("repo"), {"check", "./zoo", "--baseline", "ci/base.json", "--strict"}));
  ExpectKnown(CliIn(Path("repo"), {"check", Path("repo/zoo"), "--baseline",
                                   Path("repo/ci/base.json"), "--strict"}));
  ExpectKnown(
      CliIn(Path("repo/sub"), {"check", "../zoo", "--baseline", "../ci/base.json", "--strict"}));
  // Another checkout of the same repository, with the first one's baseline.
  fs::copy(Path("repo"), Path("other"), fs::copy_options::recursive);
  ExpectKnown(
      CliIn(Path("other"), {"check", "zoo", "--baseline", Path("repo/ci/base.json"), "--strict"}));
}

TEST_F(Baselines, ABaselineThatMatchesNothingIsSaid) {
  Write(
      "repo/ci/other.json",
      R"({"schema_version": 1, "kind": "check-set", "models": [{"model": "elsewhere/x.onnx", "nodes": []}]})");
  const Result r = CliIn(Path("repo"), {"check", "zoo", "--baseline", "ci/other.json"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("check: warning: --baseline ci/other.json: none of its 1 model(s) "
                               "is among the 2 checked"));
  EXPECT_THAT(r.out, HasSubstr("0 findings known to the baseline"));
}

TEST_F(Baselines, SarifResultsHaveARegionAndAFingerprint) {
  const Result a = CliIn(Path("repo"), {"check", "zoo", "--sarif", "-"});
  const Result b = CliIn(Path("repo/sub"), {"check", "../zoo", "--sarif", "-"});
  absl::StatusOr<Json> da = report::ParseJson(a.out), db = report::ParseJson(b.out);
  ASSERT_TRUE(da.ok() && db.ok()) << a.out;
  const Json& ra = (*da)["runs"][0]["results"];
  const Json& rb = (*db)["runs"][0]["results"];
  ASSERT_EQ(ra.size(), 2u);
  for (size_t k = 0; k < ra.size(); ++k) {
    EXPECT_EQ(ra[k]["locations"][0]["physicalLocation"]["region"]["startLine"], 1);
    const std::string fp = ra[k]["partialFingerprints"]["onnxBcastFinding/v1"];
    EXPECT_EQ(fp.size(), 16u);
    // The same finding named from another folder keeps its fingerprint.
    EXPECT_EQ(rb[k]["partialFingerprints"]["onnxBcastFinding/v1"], fp);
  }
  EXPECT_NE(ra[0]["partialFingerprints"], ra[1]["partialFingerprints"]);
}

TEST_F(Baselines, CheckOfAFolderShowsProgress) {
  const Result r = CliIn(Path("repo"), {"check", "zoo", "--progress"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("[I] check 1/2: zoo/"));
  EXPECT_THAT(r.err, HasSubstr("[I] check 2/2: zoo/"));
  EXPECT_THAT(r.err, HasSubstr("... 1 error ("));
  EXPECT_THAT(r.err, HasSubstr("... 1 conditional ("));
  // Without --progress on a pipe: nothing.
  EXPECT_EQ(CliIn(Path("repo"), {"check", "zoo"}).err, "");
}

}  // namespace
}  // namespace onnx_bcast
