// Atomic output under SIGKILL: `onnx-bcast opt IN -o OUT` is killed at seeded random moments
// spanning the whole run while OUT holds an older model, and OUT must then be exactly the old
// model or exactly the new one, never a mix or a truncation. With --external-data the model and
// its data file must stay a consistent pair: the model at OUT reads the weights it was saved
// with.
//
// The contract on leftovers: a SIGKILLed process cannot clean up, so it may leave temporaries
// named ".OUT.tmp.XXXXXX" / ".OUT.data.tmp.XXXXXX" (hidden, never a model's name) and, with
// external data, a complete unreferenced "OUT.data" or "OUT.<n>.data" (the new data file, renamed
// before the kill stopped the model's rename; the old model references another name) that the
// next save removes. Nothing else may appear.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/external_data.h"
#include "proto/model_io.h"
#include "tests/support/cli_process.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;

using test_support::ReadAll;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

pid_t Spawn(const std::vector<std::string>& args) {
  return test_support::SpawnCli(BCAST_CLI, args, "/dev/null", "/dev/null");
}

int Wait(pid_t pid) { return test_support::WaitExitCode(pid); }

// A model of `tensors` initializers of `floats` floats each, summed; `salt` changes every value
// so two models of the same shape differ in every payload byte.
std::string BigModel(int tensors, int floats, float salt) {
  std::string text = absl::StrCat("<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[",
                                  floats, "] x) => (float[", floats, "] y) {\n");
  std::string prev = "x";
  for (int i = 0; i < tensors; ++i) {
    const std::string next = i + 1 == tensors ? "y" : absl::StrCat("s", i);
    absl::StrAppend(&text, "  ", next, " = Add(", prev, ", w", i, ")\n");
    prev = next;
  }
  absl::StrAppend(&text, "}");
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  for (int i = 0; i < tensors; ++i) {
    onnx::TensorProto* t = m->proto.mutable_graph()->add_initializer();
    t->set_name(absl::StrCat("w", i));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(floats);
    std::vector<float> values(floats);
    for (int k = 0; k < floats; ++k) values[k] = salt + static_cast<float>(i * 7 + k % 1000);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                                values.size() * sizeof(float)));
  }
  return proto::SerializeModel(m->proto).value();
}

// The model at `path` with every external payload read back inline: what a reader of the
// file actually gets. Empty when the model or any payload cannot be read.
std::string Resolved(const std::string& path) {
  absl::StatusOr<proto::Model> m = proto::LoadModel(path);
  if (!m.ok()) return "";
  for (onnx::TensorProto& t : *m->proto.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    absl::StatusOr<std::string> bytes = proto::ReadExternalData(t, m->base_dir);
    if (!bytes.ok()) return "";
    t.clear_external_data();
    t.clear_data_location();
    t.set_raw_data(*bytes);
  }
  return proto::SerializeModel(m->proto).value_or("");
}

struct Variant {
  const char* name;
  bool external;
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

class KillDuringSave : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "bcast_kill_XXXXXX").string();
    root_ = ::mkdtemp(pattern.data());
    for (const char* d : {"/in", "/out", "/ref_old", "/ref_new"}) fs::create_directories(root_ + d);
    // 8 MB of weights: a run takes 100-200 ms, long enough to be hit at every stage of the save.
    WriteFile(root_ + "/in/new.onnx", BigModel(8, 1 << 18, 0.5f));
    WriteFile(root_ + "/in/old.onnx", BigModel(8, 1 << 18, 0.25f));
  }
  void TearDown() override { fs::remove_all(root_); }

  std::vector<std::string> Opt(const std::string& in, const std::string& out) const {
    std::vector<std::string> args = {"opt", "--passes", "none", in, "-o", out};
    if (GetParam().external) args.push_back("--external-data");
    return args;
  }

  std::string root_;
};

TEST_P(KillDuringSave, DestinationIsOldOrNewAfterEveryKill) {
  const bool external = GetParam().external;
  const std::string out_dir = root_ + "/out", out = out_dir + "/o.onnx";
  // References: the old and new outputs of uninterrupted runs, and how long a run takes.
  ASSERT_EQ(Wait(Spawn(Opt(root_ + "/in/old.onnx", root_ + "/ref_old/o.onnx"))), 0);
  double longest_ms = 0;
  for (int i = 0; i < 3; ++i) {
    fs::remove_all(root_ + "/ref_new");
    fs::create_directories(root_ + "/ref_new");
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(Wait(Spawn(Opt(root_ + "/in/new.onnx", root_ + "/ref_new/o.onnx"))), 0);
    longest_ms = std::max(
        longest_ms,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  const std::string old_bytes = ReadAll(root_ + "/ref_old/o.onnx");
  const std::string new_bytes = ReadAll(root_ + "/ref_new/o.onnx");
  const std::string old_data = ReadAll(root_ + "/ref_old/o.onnx.data");
  const std::string old_resolved = Resolved(root_ + "/ref_old/o.onnx");
  const std::string new_resolved = Resolved(root_ + "/ref_new/o.onnx");
  ASSERT_FALSE(old_resolved.empty());
  ASSERT_NE(old_resolved, new_resolved);
  if (external) {
    ASSERT_GT(old_data.size(), 7u << 20);
  }

  const std::regex leftover(external ? R"(\.o\.onnx(\.[0-9]+)?\.data\.tmp\.......|\.o\.onnx\.tmp\.......|o\.onnx(\.[0-9]+)?\.data)"
                                     : R"(\.o\.onnx\.tmp\.......)");
  std::mt19937 rng(20261122);
  // Delays span the whole run and a little past it, so some runs finish (new) and the rest
  // are cut at every stage: loading, serializing, writing, fsync, the renames.
  std::uniform_real_distribution<double> delay_ms(0, longest_ms * 1.1);
  const int trials = 100;
  int saw_old = 0, saw_new = 0;
  for (int trial = 0; trial < trials; ++trial) {
    fs::remove_all(out_dir);
    fs::create_directories(out_dir);
    WriteFile(out, old_bytes);
    if (external) WriteFile(out_dir + "/o.onnx.data", old_data);

    // On a loaded machine the trials may all run slower than the references did: the last
    // fifth then waits longer, so that some runs do reach the commit.
    const double ms = trial >= trials * 4 / 5 && saw_new == 0 ? delay_ms(rng) * 3 : delay_ms(rng);
    const pid_t pid = Spawn(Opt(root_ + "/in/new.onnx", out));
    const timespec ts = {static_cast<time_t>(ms / 1000),
                         static_cast<long>(std::fmod(ms, 1000.0) * 1e6)};
    ::nanosleep(&ts, nullptr);
    ::kill(pid, SIGKILL);
    const int code = Wait(pid);
    ASSERT_TRUE(code == 0 || code == 128 + SIGKILL) << "exit " << code;

    SCOPED_TRACE(absl::StrCat("trial ", trial, ", killed after ", ms, " ms"));
    if (external) {
      // The pair as a reader sees it: the model with the weights it points at.
      const std::string got = Resolved(out);
      ASSERT_TRUE(got == old_resolved || got == new_resolved)
          << "the model at OUT reads weights it was not saved with (or cannot be read)";
      (got == old_resolved ? saw_old : saw_new)++;
    } else {
      const std::string got = ReadAll(out);
      ASSERT_TRUE(got == old_bytes || got == new_bytes)
          << "OUT is neither the old nor the new model (" << got.size() << " bytes)";
      (got == old_bytes ? saw_old : saw_new)++;
    }
    // Only the documented leftovers beside OUT and what it references.
    std::set<std::string> referenced = {"o.onnx"};
    if (absl::StatusOr<proto::Model> m = proto::LoadModel(out); m.ok()) {
      for (const onnx::TensorProto& t : m->proto.graph().initializer()) {
        for (const auto& e : t.external_data()) {
          if (e.key() == "location") referenced.insert(e.value());
        }
      }
    }
    for (const auto& entry : fs::directory_iterator(out_dir)) {
      const std::string name = entry.path().filename().string();
      EXPECT_TRUE(referenced.count(name) > 0 || std::regex_match(name, leftover))
          << "unexpected file left in the output directory: " << name;
    }
  }
  std::printf("%d trials, run %.1f ms: %d left the old model, %d the new one\n", trials,
              longest_ms, saw_old, saw_new);
  // Both outcomes occurred: the kills really landed before and after the commit.
  EXPECT_GT(saw_old, 0);
  EXPECT_GT(saw_new, 0);
}

TEST(SaveAfterKill, NextSaveRemovesStaleDataFiles) {
  std::string pattern = (fs::temp_directory_path() / "bcast_kill_XXXXXX").string();
  const std::string root = ::mkdtemp(pattern.data());
  fs::create_directories(root + "/out");
  WriteFile(root + "/new.onnx", BigModel(2, 1000, 0.5f));
  // What a kill between the data file's rename and the model's leaves: the old pair plus a
  // complete orphan data file.
  WriteFile(root + "/out/o.onnx.data", "old data");
  WriteFile(root + "/out/o.onnx.1.data", "orphan");
  WriteFile(root + "/out/o.onnx.x.data", "not ours");
  ASSERT_EQ(Wait(Spawn({"opt", "--passes", "none", root + "/new.onnx", "-o", root + "/out/o.onnx",
                        "--external-data"})),
            0);
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(root + "/out")) {
    names.insert(e.path().filename().string());
  }
  // The new data went to the first free name; the old and orphan files are gone.
  EXPECT_EQ(names, (std::set<std::string>{"o.onnx", "o.onnx.2.data", "o.onnx.x.data"}));
  EXPECT_FALSE(Resolved(root + "/out/o.onnx").empty());
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Hostile, KillDuringSave,
                         ::testing::Values(Variant{"Inline", false}, Variant{"ExternalData", true}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace onnx_bcast
