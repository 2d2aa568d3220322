// What a model may make us write: only our own outputs. Every test runs the onnx-bcast binary on
// a model whose external-data locations are chosen by an attacker (.bashrc,
// .ssh/authorized_keys, the input model, the output's own name, a symlinked directory, ...) or
// on output paths that are links, FIFOs, devices or inputs, and checks that nothing but the
// files we name after the output is written, and that the saved weights are the input's.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/external_data.h"
#include "proto/model_io.h"
#include "tests/support/cli_process.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using test_support::CliResult;
using test_support::ReadAll;

// ---------------------------------------------------------------------------------------------
// Files, models and the CLI.

void WriteFile(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

class Env {
 public:
  Env() {
    std::string pattern = (fs::temp_directory_path() / "bcast_save_XXXXXX").string();
    root_ = ::mkdtemp(pattern.data());
    for (const char* d : {"/in", "/out", "/outside", "/scratch"}) fs::create_directories(root_ + d);
  }
  ~Env() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string root(const std::string& name = "") const { return root_ + "/" + name; }
  std::string in(const std::string& name = "") const { return root_ + "/in/" + name; }
  std::string out(const std::string& name = "") const { return root_ + "/out/" + name; }
  std::string outside(const std::string& name = "") const { return root_ + "/outside/" + name; }
  std::string scratch() const { return root_ + "/scratch"; }

 private:
  std::string root_;
};

// Six floats, different for every tensor index.
std::string Weights(int index) {
  std::string bytes(24, '\0');
  for (int i = 0; i < 6; ++i) {
    const float f = static_cast<float>(100 * index + i) + 0.5f;
    std::memcpy(&bytes[4 * i], &f, 4);
  }
  return bytes;
}

void AddExternal(onnx::TensorProto* t, const std::string& location, int64_t offset = 0) {
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"location", location}, {"offset", absl::StrCat(offset)}, {"length", "24"}}) {
    auto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
}

onnx::TensorProto* AddFloatInitializer(onnx::GraphProto* g, const std::string& name, int64_t n) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(n);
  return t;
}

void AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
              const std::string& name, int64_t n) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  auto* tensor = v->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(n);
}

// y = x + w0 + w1 + ...; w<i> is external at locations[i] (holding Weights(i)). With
// `inline_floats`, also an inline initializer "big" of that many floats, output through
// Identity as "big_out" (so --external-data has a payload to move).
onnx::ModelProto ChainModel(const std::vector<std::string>& locations, int inline_floats = 0) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  AddValue(g->mutable_input(), "x", 6);
  std::string prev = "x";
  for (size_t i = 0; i < locations.size(); ++i) {
    const std::string w = absl::StrCat("w", i), y = absl::StrCat("y", i);
    AddExternal(AddFloatInitializer(g, w, 6), locations[i]);
    onnx::NodeProto* node = g->add_node();
    node->set_op_type("Add");
    node->set_name(absl::StrCat("add", i));
    node->add_input(prev);
    node->add_input(w);
    node->add_output(y);
    prev = y;
  }
  AddValue(g->mutable_output(), prev, 6);
  if (inline_floats > 0) {
    onnx::TensorProto* big = AddFloatInitializer(g, "big", inline_floats);
    for (int i = 0; i < inline_floats; ++i) big->add_float_data(static_cast<float>(i) * 0.25f);
    onnx::NodeProto* node = g->add_node();
    node->set_op_type("Identity");
    node->add_input("big");
    node->add_output("big_out");
    AddValue(g->mutable_output(), "big_out", inline_floats);
  }
  return m;
}

// Writes ChainModel(locations) as `dir`/`name` with every location's data file inside `dir`.
void WriteChain(const std::string& dir, const std::vector<std::string>& locations,
                const std::string& name = "m.onnx", int inline_floats = 0) {
  for (size_t i = 0; i < locations.size(); ++i) {
    WriteFile(dir + "/" + locations[i], Weights(static_cast<int>(i)));
  }
  WriteFile(dir + "/" + name, proto::SerializeModel(ChainModel(locations, inline_floats)).value());
}

// The payload of every initializer of the model at `path`, read as the tool reads them.
std::map<std::string, std::string> Payloads(const std::string& path) {
  std::map<std::string, std::string> payloads;
  absl::StatusOr<proto::Model> m = proto::LoadModel(path);
  if (!m.ok()) {
    ADD_FAILURE() << m.status();
    return payloads;
  }
  for (const onnx::TensorProto& t : m->proto.graph().initializer()) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      absl::StatusOr<std::string> bytes = proto::ReadExternalData(t, m->base_dir);
      if (!bytes.ok()) {
        ADD_FAILURE() << path << ": " << bytes.status();
        continue;
      }
      payloads[t.name()] = *bytes;
    } else if (t.has_raw_data()) {
      payloads[t.name()] = t.raw_data();
    } else {
      std::string bytes(t.float_data_size() * 4, '\0');
      for (int i = 0; i < t.float_data_size(); ++i) {
        const float f = t.float_data(i);
        std::memcpy(&bytes[4 * i], &f, 4);
      }
      payloads[t.name()] = bytes;
    }
  }
  return payloads;
}

// Payloads() for a reader racing writers: nullopt when the model or a data file is missing.
std::optional<std::map<std::string, std::string>> TryPayloads(const std::string& path) {
  std::map<std::string, std::string> payloads;
  absl::StatusOr<proto::Model> m = proto::LoadModel(path);
  if (!m.ok()) return std::nullopt;
  for (const onnx::TensorProto& t : m->proto.graph().initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    absl::StatusOr<std::string> bytes = proto::ReadExternalData(t, m->base_dir);
    if (!bytes.ok()) return std::nullopt;
    payloads[t.name()] = *bytes;
  }
  return payloads;
}

// The weights the saved model reads are exactly the input's.
void ExpectSameWeights(const std::string& input, const std::string& output) {
  const std::map<std::string, std::string> want = Payloads(input), got = Payloads(output);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want) << output << " does not read the weights of " << input;
}

struct SpawnOptions {
  std::string cwd;           ///< working directory of the child ("" = ours)
  rlim_t max_file_bytes = 0;  ///< RLIMIT_FSIZE for the child (0 = none): a full disk
};

pid_t Spawn(const std::vector<std::string>& args, const std::string& scratch,
            const SpawnOptions& options = {}) {
  const std::string out = scratch + "/stdout", err = scratch + "/stderr";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (std::freopen(out.c_str(), "w", stdout) == nullptr ||
        std::freopen(err.c_str(), "w", stderr) == nullptr) {
      ::_exit(126);
    }
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(125);
    if (options.max_file_bytes > 0) {
      ::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead
      const struct rlimit limit = {options.max_file_bytes, options.max_file_bytes};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    test_support::ExecCli(BCAST_CLI, args);
  }
  return pid;
}

CliResult Cli(const Env& env, const std::vector<std::string>& args,
              const SpawnOptions& options = {}) {
  CliResult r;
  r.code = test_support::WaitExitCode(Spawn(args, env.scratch(), options));
  r.out = ReadAll(env.scratch() + "/stdout");
  r.err = ReadAll(env.scratch() + "/stderr");
  return r;
}

// A refusal: exit 4 and one line on stderr starting with the path and saying why.
void ExpectRefused(const CliResult& r, const std::string& path, const std::string& why) {
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_EQ(r.err.rfind(path, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(why));
}

// Everything observable about one path without following a link: kind, size, mode, inode,
// link count, time, link target and contents.
std::string Describe(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "missing";
  std::string what = absl::StrCat(st.st_mode, " ", st.st_size, " ", st.st_ino, " ", st.st_nlink,
                                  " ", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
  if (S_ISLNK(st.st_mode)) absl::StrAppend(&what, " -> ", fs::read_symlink(path).string());
  if (S_ISREG(st.st_mode)) absl::StrAppend(&what, " ", ReadAll(path));
  if (S_ISCHR(st.st_mode)) absl::StrAppend(&what, " dev ", st.st_rdev);
  return what;
}

// Files in `dir` (not recursive) whose name matches none of `allowed`.
std::vector<std::string> Unexpected(const std::string& dir, const std::string& allowed) {
  std::vector<std::string> extra;
  const std::regex re(allowed);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, re)) extra.push_back(name);
  }
  return extra;
}

// A character device of our own (the null device's numbers): tests never aim at /dev itself.
bool MakeCharDevice(const std::string& path) {
  return ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
}

// ---------------------------------------------------------------------------------------------
// The decoy test: whatever the model names, opt, check --annotate, run --output-dir, --json and
// --report leave every decoy untouched and write only names derived from their outputs.

TEST(SavePaths, DecoysStayUntouched) {
  Env env;
  // The model names, relative to in/: dotfiles, a path under a directory that is a symlink in
  // out/, names of a FIFO and a device in out/, the outputs' own names and the input itself.
  const std::vector<std::string> locations = {
      ".bashrc", ".ssh/authorized_keys", "d/target", "fifo", "null", "m.onnx.data",
      "a.onnx", "output_0.pb", "in/m.onnx", "./m.onnx.data.w"};
  WriteChain(env.in(), locations);
  // Decoys: in out/ the same names, some of them special; outside/ behind out/d.
  WriteFile(env.out(".bashrc"), "export PS1=precious\n");
  WriteFile(env.outside("target"), "outside, precious");
  fs::create_directory_symlink(env.outside(), env.out("d"));
  ASSERT_EQ(::mkfifo(env.out("fifo").c_str(), 0644), 0);
  const bool have_device = MakeCharDevice(env.out("null"));
  if (!have_device) fs::create_symlink("/dev/null", env.out("null"));
  fs::create_symlink(env.in("m.onnx"), env.out("in"));  // "in/m.onnx" through out/in
  const std::vector<std::string> decoys = {
      env.in("m.onnx"), env.out(".bashrc"), env.outside("target"), env.out("d"),
      env.out("fifo"), env.out("null"), env.out("in"), env.in(".bashrc"),
      env.in(".ssh/authorized_keys"), env.in("d/target"), env.in("in/m.onnx")};
  std::map<std::string, std::string> before;
  for (const std::string& d : decoys) before[d] = Describe(d);

  const std::string in = env.in("m.onnx");
  struct Command {
    std::vector<std::string> args;
    int code;
  };
  const std::vector<Command> commands = {
      {{"opt", "--passes", "none", in, "-o", env.out("m.onnx")}, 0},
      {{"opt", "--passes", "none", in, "-o", env.out("m.onnx"), "--external-data"}, 0},
      {{"opt", in, "-o", env.out("o.onnx"), "--target", "none", "--report", env.out("rep.json")}, 0},
      {{"check", in, "--annotate", "-o", env.out("a.onnx"), "--json", env.out("r.json")}, 0},
      {{"run", in, "--output-dir", env.out()}, 0},
      // Outputs aimed straight at the decoys are refused.
      {{"opt", "--passes", "none", in, "-o", env.out("fifo")}, 4},
      {{"opt", "--passes", "none", in, "-o", env.out("null")}, 4},
      {{"opt", "--passes", "none", in, "-o", env.out("in")}, 4},
      {{"opt", "--passes", "none", in, "-o", in}, 4},
      {{"opt", "--passes", "none", in, "-o", env.in(".bashrc")}, 4},
      {{"check", in, "--json", env.out("fifo")}, 4},
      {{"check", in, "--json", env.out("null")}, 4},
      {{"check", in, "--json", in}, 4},
      {{"check", in, "--annotate", "-o", env.out("in")}, 4},
      {{"opt", in, "-o", env.out("o2.onnx"), "--target", "none", "--report", in}, 4},
      {{"opt", in, "-o", env.out("o2.onnx"), "--target", "none", "--report", env.out("fifo")}, 4},
  };
  for (const Command& c : commands) {
    const CliResult r = Cli(env, c.args);
    EXPECT_EQ(r.code, c.code) << absl::StrJoin(c.args, " ") << "\n" << r.out << r.err;
    for (const std::string& d : decoys) {
      EXPECT_EQ(Describe(d), before[d]) << d << " changed by: " << absl::StrJoin(c.args, " ");
    }
  }
  EXPECT_FALSE(fs::exists(env.out(".ssh")));
  EXPECT_THAT(Unexpected(env.out(), R"((\.bashrc|d|fifo|null|in|rep\.json|r\.json|output_0\.pb|)"
                                    R"((m|o|a)\.onnx((\.[0-9]+)?\.data)?))"),
              ::testing::IsEmpty());
  ExpectSameWeights(in, env.out("m.onnx"));
  ExpectSameWeights(in, env.out("o.onnx"));
  ExpectSameWeights(in, env.out("a.onnx"));
}

// ---------------------------------------------------------------------------------------------
// Group 1: the model chooses what we write.

TEST(SavePaths, DotfileLocationsAreCopiedUnderOurNames) {
  Env env;
  WriteChain(env.in(), {".bashrc", ".ssh/authorized_keys"});
  WriteFile(env.out(".bashrc"), "precious");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("m.onnx")},
        std::vector<std::string>{"check", env.in("m.onnx"), "--annotate", "-o",
                                 env.out("a.onnx")}}) {
    const CliResult r = Cli(env, args);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(ReadAll(env.out(".bashrc")), "precious");
  EXPECT_FALSE(fs::exists(env.out(".ssh")));
  EXPECT_TRUE(fs::exists(env.out("m.onnx.data")));
  EXPECT_TRUE(fs::exists(env.out("m.onnx.1.data")));
  ExpectSameWeights(env.in("m.onnx"), env.out("m.onnx"));
  ExpectSameWeights(env.in("m.onnx"), env.out("a.onnx"));
}

TEST(SavePaths, LocationNamingTheInputFromAParentDirectory) {
  // Output in the input's parent; the location "in/m.onnx" (relative to in/) would be
  // parent/in/m.onnx, the input model itself, if locations were destinations.
  Env env;
  WriteChain(env.in(), {"in/m.onnx"});
  const std::string input_before = ReadAll(env.in("m.onnx"));
  const CliResult r = Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.root("m.onnx")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ReadAll(env.in("m.onnx")), input_before);
  ExpectSameWeights(env.in("m.onnx"), env.root("m.onnx"));
}

TEST(SavePaths, SymlinkedDirectoryInTheOutputDirectoryIsNotFollowed) {
  Env env;
  WriteChain(env.in(), {"d/w.bin"});
  fs::create_directory_symlink(env.outside(), env.out("d"));
  const CliResult r = Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("m.onnx")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_empty(env.outside()));
  ExpectSameWeights(env.in("m.onnx"), env.out("m.onnx"));
}

TEST(SavePaths, LocationEqualToTheOutputName) {
  Env env;
  WriteChain(env.in(), {"o.onnx"});
  const CliResult r = Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("o.onnx")});
  ASSERT_EQ(r.code, 0) << r.err;
  // The output's weights are the input's, not the output's own protobuf bytes.
  ExpectSameWeights(env.in("m.onnx"), env.out("o.onnx"));
  // In the input's own directory that name is an input file: refused.
  ExpectRefused(Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.in("o.onnx")}), env.in("o.onnx"),
                "external data file 'o.onnx' of the input model");
  EXPECT_EQ(ReadAll(env.in("o.onnx")), Weights(0));
}

TEST(SavePaths, DotSlashOutDataWithExternalData) {
  // In one directory: the input reads "./o.onnx.data", and the output o.onnx with
  // --external-data writes its own data file: the input's must survive and neither model may
  // read the other's weights.
  Env env;
  WriteChain(env.in(), {"./o.onnx.data", "o.onnx.1.data"}, "m.onnx", /*inline_floats=*/512);
  const std::string in_data = ReadAll(env.in("o.onnx.data"));
  const CliResult r =
      Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.in("o.onnx"), "--external-data"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ReadAll(env.in("o.onnx.data")), in_data);
  EXPECT_EQ(ReadAll(env.in("o.onnx.1.data")), Weights(1));
  ExpectSameWeights(env.in("m.onnx"), env.in("o.onnx"));
  // A second save over it keeps the input's files and still reads the right weights.
  ASSERT_EQ(Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.in("o.onnx"), "--external-data"}).code,
            0);
  EXPECT_EQ(ReadAll(env.in("o.onnx.data")), in_data);
  ExpectSameWeights(env.in("m.onnx"), env.in("o.onnx"));
}

TEST(SavePaths, ReadsGoThroughTheValidatedDescriptor) {
  // A directory swapped for a symlink to outside/ while the model is read: every read returns
  // the inside bytes or is refused, never the outside file.
  Env env;
  WriteChain(env.in(), {"d/w.bin"});
  WriteFile(env.outside("w.bin"), std::string(24, 'X'));
  fs::create_directory_symlink(env.outside(), env.in("link"));
  absl::StatusOr<proto::Model> m = proto::LoadModel(env.in("m.onnx"));
  ASSERT_TRUE(m.ok()) << m.status();
  const onnx::TensorProto& w = m->proto.graph().initializer(0);
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    const std::string d = env.in("d"), real = env.in("real"), link = env.in("link");
    const std::string tmp = env.in("tmp");
    while (!stop) {
      ::rename(d.c_str(), real.c_str());   // d gone
      ::rename(link.c_str(), d.c_str());   // d -> outside/
      ::rename(d.c_str(), link.c_str());   // d gone
      ::rename(real.c_str(), d.c_str());   // d real again
    }
    (void)tmp;
  });
  int inside = 0, outside = 0;
  for (int i = 0; i < 3000; ++i) {
    absl::StatusOr<std::string> bytes = proto::ReadExternalData(w, m->base_dir);
    if (!bytes.ok()) continue;
    if (*bytes == Weights(0)) ++inside;
    if (*bytes == std::string(24, 'X')) ++outside;
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(outside, 0) << "read the file outside the model directory " << outside << " times";
  // How many racing reads succeed depends on scheduling (on a loaded machine the swapper can
  // win every time); the directory is real again now, and a read must find the inside bytes.
  (void)inside;
  absl::StatusOr<std::string> after = proto::ReadExternalData(w, m->base_dir);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*after, Weights(0));
}

// ---------------------------------------------------------------------------------------------
// Group 4: unsafe writes to paths the user gave.

TEST(SavePaths, JsonAndReportNeverOverwriteTheInputNorFollowSymlinks) {
  Env env;
  WriteChain(env.in(), {"w.bin"});
  const std::string in = env.in("m.onnx");
  const std::string model_before = Describe(in), data_before = Describe(env.in("w.bin"));
  ExpectRefused(Cli(env, {"check", in, "--json", in}), in, "is the input model");
  ExpectRefused(Cli(env, {"check", in, "--json", env.in("w.bin")}), env.in("w.bin"),
                "external data file 'w.bin'");
  ExpectRefused(Cli(env, {"opt", in, "--dry-run", "--target", "none", "--report", in}), in,
                "is the input model");
  fs::create_hard_link(in, env.out("hard.json"));
  ExpectRefused(Cli(env, {"check", in, "--json", env.out("hard.json")}), env.out("hard.json"),
                "is the input model");
  WriteFile(env.outside("victim"), "precious");
  fs::create_symlink(env.outside("victim"), env.out("link.json"));
  ExpectRefused(Cli(env, {"check", in, "--json", env.out("link.json")}), env.out("link.json"),
                "symlink");
  ExpectRefused(Cli(env, {"opt", in, "--dry-run", "--target", "none", "--report",
                          env.out("link.json")}),
                env.out("link.json"), "symlink");
  EXPECT_EQ(ReadAll(env.outside("victim")), "precious");
  fs::remove(env.out("hard.json"));  // its own link count aside, the model is untouched
  EXPECT_EQ(Describe(in), model_before);
  EXPECT_EQ(Describe(env.in("w.bin")), data_before);
  // "-" is still stdout; a plain file is written whole.
  CliResult r = Cli(env, {"check", in, "--json", "-"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"model\""));
  r = Cli(env, {"check", in, "--json", env.out("r.json")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(ReadAll(env.out("r.json")), HasSubstr("\"model\""));
}

TEST(SavePaths, FullDiskLeavesTheOldReportAndNoTemporary) {
  // RLIMIT_FSIZE makes every write past 16 bytes fail (EFBIG), as a full disk would.
  Env env;
  WriteChain(env.in(), {"w.bin"});
  WriteFile(env.out("r.json"), "old report");
  WriteFile(env.out("rep.json"), "old report");
  SpawnOptions full;
  full.max_file_bytes = 16;
  CliResult r = Cli(env, {"check", env.in("m.onnx"), "--json", env.out("r.json")}, full);
  EXPECT_EQ(r.code, 4) << r.err;
  r = Cli(env,
          {"opt", env.in("m.onnx"), "--dry-run", "--target", "none", "--report",
           env.out("rep.json")},
          full);
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(ReadAll(env.out("r.json")), "old report");
  EXPECT_EQ(ReadAll(env.out("rep.json")), "old report");
  EXPECT_THAT(Unexpected(env.out(), R"(r\.json|rep\.json)"), ::testing::IsEmpty());
}

TEST(SavePaths, OutputOntoAFifoOrADeviceIsRefused) {
  Env env;
  WriteChain(env.in(), {"w.bin"});
  ASSERT_EQ(::mkfifo(env.out("fifo").c_str(), 0644), 0);
  ExpectRefused(Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("fifo")}), env.out("fifo"),
                "not a regular file (a FIFO)");
  EXPECT_TRUE(fs::is_fifo(env.out("fifo")));
  if (MakeCharDevice(env.out("null"))) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("null")},
          std::vector<std::string>{"check", env.in("m.onnx"), "--json", env.out("null")},
          std::vector<std::string>{"check", env.in("m.onnx"), "--annotate", "-o",
                                   env.out("null")}}) {
      ExpectRefused(Cli(env, args), env.out("null"), "character device");
      EXPECT_TRUE(fs::is_character_file(env.out("null")));
    }
  }
  fs::create_symlink("/dev/null", env.out("devnull"));
  ExpectRefused(Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("devnull")}),
                env.out("devnull"), "symlink");
  EXPECT_TRUE(fs::is_symlink(env.out("devnull")));
}

TEST(SavePaths, OutputOntoTheInputsExternalDataIsRefused) {
  Env env;
  WriteChain(env.in(), {"w.bin"});
  ExpectRefused(Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.in("w.bin")}),
                env.in("w.bin"), "external data file 'w.bin'");
  // --in-place writes the model itself, never its data: an -o naming anything else is refused
  // before any work (usage error).
  EXPECT_EQ(
      Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.in("w.bin"), "--in-place"})
          .code,
      64);
  fs::create_symlink(env.in("w.bin"), env.out("w.onnx"));
  ExpectRefused(Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("w.onnx")}), env.out("w.onnx"),
                "external data file 'w.bin'");
  EXPECT_EQ(ReadAll(env.in("w.bin")), Weights(0));
}

TEST(SavePaths, ConcurrentExternalDataSavesNeverMixWeights) {
  // Two models with different weights saved to one output at the same moment, again and
  // again: the model at OUT always reads its own weights, complete.
  Env env;
  const int kFloats = 1024 * 1024;
  for (const char* name : {"a", "b"}) {
    onnx::ModelProto m = ChainModel({}, kFloats);
    auto* big = m.mutable_graph()->mutable_initializer(0);
    for (int i = 0; i < kFloats; ++i) big->set_float_data(i, name[0] == 'a' ? 1.0f : 2.0f + i);
    WriteFile(env.in(absl::StrCat(name, ".onnx")), proto::SerializeModel(m).value());
  }
  const std::map<std::string, std::string> a = Payloads(env.in("a.onnx"));
  const std::map<std::string, std::string> b = Payloads(env.in("b.onnx"));
  fs::create_directories(env.scratch() + "/a");
  fs::create_directories(env.scratch() + "/b");
  // A reader loading the model at OUT all along: whatever it reads is one whole model.
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0}, mixed{0};
  std::thread reader([&] {
    while (!stop) {
      std::optional<std::map<std::string, std::string>> got = TryPayloads(env.out("m.onnx"));
      if (!got.has_value()) continue;
      ++reads;
      if (*got != a && *got != b) ++mixed;
    }
  });
  for (int round = 0; round < 12; ++round) {
    const pid_t pa = Spawn({"opt", "--passes", "none", env.in("a.onnx"), "-o", env.out("m.onnx"), "--external-data"},
                           env.scratch() + "/a");
    const pid_t pb = Spawn({"opt", "--passes", "none", env.in("b.onnx"), "-o", env.out("m.onnx"), "--external-data"},
                           env.scratch() + "/b");
    ASSERT_EQ(test_support::WaitExitCode(pa), 0) << ReadAll(env.scratch() + "/a/stderr");
    ASSERT_EQ(test_support::WaitExitCode(pb), 0) << ReadAll(env.scratch() + "/b/stderr");
    const std::map<std::string, std::string> got = Payloads(env.out("m.onnx"));
    EXPECT_TRUE(got == a || got == b) << "round " << round << ": the model reads other weights";
  }
  stop = true;
  reader.join();
  EXPECT_EQ(mixed, 0) << "of " << reads << " reads during the saves";
  // Only our names remain, and one data file: the one the model reads.
  EXPECT_THAT(Unexpected(env.out(), R"(m\.onnx((\.[0-9]+)?\.data)?)"), ::testing::IsEmpty());
  int data_files = 0;
  for (const auto& e : fs::directory_iterator(env.out())) {
    data_files += e.path().extension() == ".data" ? 1 : 0;
  }
  EXPECT_EQ(data_files, 1);
}

TEST(SavePaths, ModelPathStartingWithLessThanIsStillProtected) {
  Env env;
  WriteChain(env.in(), {"w.bin"}, "<m.onnx");
  const std::string before = Describe(env.in("<m.onnx"));
  SpawnOptions in_dir;
  in_dir.cwd = env.in();
  ExpectRefused(Cli(env, {"opt", "--passes", "none", "<m.onnx", "-o", "<m.onnx"}, in_dir), "<m.onnx",
                "is the input model");
  ExpectRefused(Cli(env, {"check", "<m.onnx", "--json", "<m.onnx"}, in_dir), "<m.onnx",
                "is the input model");
  EXPECT_EQ(Describe(env.in("<m.onnx")), before);
}

TEST(SavePaths, RunOutputDirIsAllOrNothing) {
  // Two outputs; output_1.pb cannot be written (a directory is in the way): output_0.pb must
  // not be written either.
  Env env;
  WriteChain(env.in(), {"w.bin"}, "m.onnx", /*inline_floats=*/4);
  fs::create_directories(env.out("res/output_1.pb"));
  CliResult r = Cli(env, {"run", env.in("m.onnx"), "--output-dir", env.out("res")});
  ExpectRefused(r, env.out("res/output_1.pb"), "is a directory");
  EXPECT_FALSE(fs::exists(env.out("res/output_0.pb")));
  // An output file that is a symlink is refused, its target untouched.
  fs::remove(env.out("res/output_1.pb"));
  WriteFile(env.outside("victim"), "precious");
  fs::create_symlink(env.outside("victim"), env.out("res/output_1.pb"));
  r = Cli(env, {"run", env.in("m.onnx"), "--output-dir", env.out("res")});
  ExpectRefused(r, env.out("res/output_1.pb"), "symlink");
  EXPECT_FALSE(fs::exists(env.out("res/output_0.pb")));
  EXPECT_EQ(ReadAll(env.outside("victim")), "precious");
  // Written into the model's own directory, an output never replaces the model's data.
  fs::remove(env.out("res/output_1.pb"));
  WriteChain(env.in(), {"output_0.pb"}, "n.onnx", 4);
  r = Cli(env, {"run", env.in("n.onnx"), "--output-dir", env.root("in")});
  ExpectRefused(r, env.in("output_0.pb"), "external data file 'output_0.pb'");
  EXPECT_EQ(ReadAll(env.in("output_0.pb")), Weights(0));
  r = Cli(env, {"run", env.in("m.onnx"), "--output-dir", env.out("res")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(env.out("res/output_0.pb")));
  EXPECT_TRUE(fs::exists(env.out("res/output_1.pb")));
}

// ---------------------------------------------------------------------------------------------
// Group 7: external data in training_info graphs.

// Group 3: an 8 GiB sparse data file (truncate: no real disk) made opt write 8 GiB of zeros.
// The copy keeps holes as holes: bounded time, and the copy's allocated blocks stay those of
// the data the source really holds (24 bytes at 4 GiB).
TEST(SavePaths, SparseExternalDataIsCopiedSparse) {
  Env env;
  constexpr int64_t kSize = int64_t{8} << 30, kAt = int64_t{4} << 30;
  onnx::ModelProto m = ChainModel({"w.bin"});
  onnx::TensorProto* t = m.mutable_graph()->mutable_initializer(0);
  t->clear_external_data();
  AddExternal(t, "w.bin", kAt);
  WriteFile(env.in("m.onnx"), proto::SerializeModel(m).value());
  {
    const int fd = ::open(env.in("w.bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    const std::string w = Weights(0);
    ASSERT_EQ(::pwrite(fd, w.data(), w.size(), kAt), static_cast<ssize_t>(w.size()));
    ASSERT_EQ(::ftruncate(fd, kSize), 0);
    ::close(fd);
  }
  auto allocated = [](const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? int64_t{st.st_blocks} * 512 : int64_t{-1};
  };
  const int64_t source_blocks = allocated(env.in("w.bin"));
  ASSERT_LT(source_blocks, int64_t{1} << 20) << "the filesystem does not keep sparse files";
  for (const bool external : {false, true}) {
    const std::string out = external ? "e.onnx" : "m.onnx";
    std::vector<std::string> args = {"opt", env.in("m.onnx"), "-o", env.out(out), "--target",
                                     "none"};
    if (external) args.push_back("--external-data");
    const auto start = std::chrono::steady_clock::now();
    const CliResult r = Cli(env, args);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(r.code, 0) << absl::StrJoin(args, " ") << "\n" << r.out << r.err;
    EXPECT_LT(seconds, 30.0) << absl::StrJoin(args, " ");
    struct stat st;
    ASSERT_EQ(::stat(env.out(out + ".data").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, kSize);
    // Holes stay holes: at most the source's blocks plus filesystem slack, never gigabytes.
    EXPECT_LE(allocated(env.out(out + ".data")), source_blocks + (int64_t{1} << 20))
        << absl::StrJoin(args, " ");
    ExpectSameWeights(env.in("m.onnx"), env.out(out));
    EXPECT_THAT(Unexpected(env.out(), R"((m|e)\.onnx(\.data)?)"), ::testing::IsEmpty());
  }
}

TEST(SavePaths, TrainingInfoExternalDataIsValidatedAndCopied) {
  Env env;
  onnx::ModelProto m = ChainModel({"w.bin"});
  onnx::GraphProto* init = m.add_training_info()->mutable_initialization();
  init->set_name("init");
  AddExternal(AddFloatInitializer(init, "t", 6), "t.bin");
  WriteFile(env.in("w.bin"), Weights(0));
  WriteFile(env.in("t.bin"), Weights(7));
  WriteFile(env.in("m.onnx"), proto::SerializeModel(m).value());
  ASSERT_EQ(Cli(env, {"opt", "--passes", "none", env.in("m.onnx"), "-o", env.out("m.onnx")}).code, 0);
  absl::StatusOr<proto::Model> back = proto::LoadModel(env.out("m.onnx"));
  ASSERT_TRUE(back.ok()) << back.status();
  const onnx::TensorProto& t = back->proto.training_info(0).initialization().initializer(0);
  absl::StatusOr<std::string> bytes = proto::ReadExternalData(t, back->base_dir);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, Weights(7));
  EXPECT_FALSE(fs::exists(env.out("t.bin")));

  // A training graph's location outside the model directory is refused like any other.
  auto* loc = init->mutable_initializer(0)->mutable_external_data(0);
  loc->set_value("../outside/t.bin");
  WriteFile(env.outside("t.bin"), Weights(7));
  WriteFile(env.in("bad.onnx"), proto::SerializeModel(m).value());
  const CliResult r = Cli(env, {"opt", "--passes", "none", env.in("bad.onnx"), "-o", env.out("bad.onnx")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("escapes the model directory"));
  EXPECT_FALSE(fs::exists(env.out("bad.onnx")));
}

}  // namespace
}  // namespace onnx_bcast
