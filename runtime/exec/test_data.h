// Test data of the ONNX layout (test_data_set_N/input_K.pb, output_K.pb) as runtime values:
// loading inputs and expected outputs bound to a model's graph, and writing outputs.
#ifndef ONNX_BCAST_RUNTIME_EXEC_TEST_DATA_H_
#define ONNX_BCAST_RUNTIME_EXEC_TEST_DATA_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "proto/sequence_codec.h"
#include "runtime/exec/executor.h"
#include "runtime/graph.h"
#include "runtime/value.h"

namespace onnx_bcast::runtime {

/// One test_data_set directory.
struct TestDataSet {
  std::string dir;
  Feeds feeds;                            ///< input_K bound to the graph's inputs by position
  std::vector<Value> expected;            ///< output_K, in order
  std::vector<std::string> output_names;  ///< the graph outputs the files correspond to
};

/// A runtime value holding a decoded test-data value.
absl::StatusOr<Value> ValueFromRaw(const proto::RawValue& raw);

/// The value as a test-data value named `name` (sequences and empty optionals included).
/// `type` is the declared type of the value (or null): when it is optional, a value that is
/// present is written wrapped in an OptionalProto, as LoadValue then expects it.
absl::StatusOr<proto::RawValue> RawFromValue(const Value& value, const std::string& name,
                                             const onnx::TypeProto* type = nullptr);

/// Reads one value file; `type` is the model's declared type of the value (or null).
absl::StatusOr<Value> LoadValue(const std::string& path, const onnx::TypeProto* type);

/// Loads `dir`. input_K binds to the K-th graph input without initializer (or the K-th graph
/// input of all, when the directory holds one file per declared input, initializers included).
absl::StatusOr<TestDataSet> LoadTestDataSet(const proto::Model& model, const std::string& dir);

/// The test_data_set_* directories of a case directory, sorted.
std::vector<std::string> TestDataSetDirs(const std::string& case_dir);

/// Writes outputs as `dir`/output_K.pb (creating `dir`); `types` (optional, by position) are
/// the declared output types. PermissionDenied when it cannot.
absl::Status SaveOutputs(const std::vector<Value>& outputs, const std::vector<std::string>& names,
                         const std::string& dir,
                         const std::vector<const onnx::TypeProto*>& types = {});

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_TEST_DATA_H_
