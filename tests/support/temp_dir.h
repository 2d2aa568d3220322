// Test support: a fresh directory under the system temp directory, removed with everything in
// it at the end; as an object (TempDir) or as a gtest fixture's base (TempDirTest). Header-only.
#ifndef ONNX_BCAST_TESTS_SUPPORT_TEMP_DIR_H_
#define ONNX_BCAST_TESTS_SUPPORT_TEMP_DIR_H_

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"

namespace onnx_bcast::test_support {

/// Makes `<tmp>/<prefix>_XXXXXX`; an empty string when that fails.
inline std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
  return ::mkdtemp(pattern.data()) == nullptr ? std::string() : pattern;
}

inline void RemoveTree(const std::string& path) {
  std::error_code ec;  // a test that failed half-way may have left anything
  if (!path.empty()) std::filesystem::remove_all(path, ec);
}

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "bcast_test") : path_(MakeTempDir(prefix)) {}
  ~TempDir() { RemoveTree(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  /// How many entries the directory itself holds.
  size_t Count() const {
    return std::distance(std::filesystem::directory_iterator(path_),
                         std::filesystem::directory_iterator());
  }
  /// Every file and directory below it (temporaries included), relative and sorted.
  std::vector<std::string> Files() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path_)) {
      names.push_back(std::filesystem::relative(e.path(), path_).string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

/// A fixture whose every test has its own directory `dir_`; Path(name) is a file in it.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("bcast_test");
    ASSERT_FALSE(dir_.empty()) << "cannot make a temporary directory";
  }
  void TearDown() override { RemoveTree(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_TEMP_DIR_H_
