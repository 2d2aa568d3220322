// Test support: a JSON report read back from a file (--json, --report, --sarif, manifests),
// with a failed parse reported as a test failure naming the file. Header-only; the test links
// the passes layer (passes/report_json).
#ifndef ONNX_BCAST_TESTS_SUPPORT_JSON_FILE_H_
#define ONNX_BCAST_TESTS_SUPPORT_JSON_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "tests/support/cli_process.h"

namespace onnx_bcast::test_support {

/// The document in `path`; null (after a test failure) when it does not parse.
inline report::Json ReadJson(const std::string& path) {
  absl::StatusOr<report::Json> j = report::ParseJson(ReadAll(path));
  EXPECT_TRUE(j.ok()) << path << ": " << j.status();
  return j.ok() ? *std::move(j) : report::Json();
}

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_JSON_FILE_H_
