// Measuring what an inference engine runs: small models generated in memory across ops,
// broadcast classes, ranks, operand kinds and orders, and the forms our rewrites produce, run
// on the engine (each in a child process, engines/isolated_run.h) and on our executor with the
// same seeded inputs. The result is a table (one row per cell) and a target profile in the
// vocabulary of targets/targets.h, so that an engine enters the code as data. A test regenerates
// the committed table, so a new engine version shows as a diff.
#ifndef ONNX_BCAST_ENGINES_ENGINE_PROBE_H_
#define ONNX_BCAST_ENGINES_ENGINE_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/engine.h"
#include "targets/targets.h"

namespace onnx_bcast::engines {

/// Where a probed operand comes from.
enum class OperandKind {
  kInput,        ///< a graph input
  kComputed,     ///< a node's output (Relu of a graph input; Not for a bool)
  kInitializer,  ///< an initializer
  kConstant,     ///< a Constant node's output
};

/// "input", "computed", "initializer", "constant".
std::string_view OperandKindName(OperandKind kind);

/// How a cell came out.
enum class CellResult {
  kRunsAndMatches,  ///< ran; every element within the error model's bound (engines/judge.h)
  kRefused,         ///< the engine refused the model (load or run): `message` is its own
  kWrong,           ///< ran, but the output differs (shape or values: `max_abs_error`)
  kCrashed,         ///< the engine died (signal) or hung
};

/// "runs-and-matches", "refused", "wrong", "crashed".
std::string_view CellResultName(CellResult result);

/// One operand of a probed node.
struct ProbeOperand {
  std::vector<int64_t> shape;
  OperandKind kind = OperandKind::kInput;
  bool is_bool = false;               ///< Where's condition
  std::vector<int64_t> int64_values;  ///< non-empty: an int64 tensor of these values (shapes)
};

/// One model: `op` over `operands` (node input order), the operand `wrapped` optionally
/// passed through one of our rewrites' forms first.
struct ProbeCell {
  std::string op;
  std::string attributes;  ///< the node's attributes in ONNX text form, e.g. "transB = 1"
  std::vector<ProbeOperand> operands;
  /// "direct", or the rewrite form applied to operand `wrapped`: "Unsqueeze" or "Reshape"
  /// (to `wrapped_shape`, equal rank), "Expand" or "Tile" (to `wrapped_shape`, the output's).
  /// Op "Reshape" cells measure run-time shapes instead (the profile's runtime_shapes): form
  /// "runtime-shape" reshapes its input [N,3,4] to Concat(Gather(Shape(x), 0), -1) with N a
  /// symbolic dim, "static-shape" the same chain with N = 2 declared. Op "Initializer" cells
  /// measure the element types of constants: form "bool", "int64", ... is the type of an
  /// initializer cast to float and added to the input. Form "op" cells are one node of op
  /// `op` on its own (ProbeGridFor), form "constant-shape" a Reshape to a constant shape, form
  /// "exact" a direct cell kept for the profile's exact-shape cells (ShapeDependentCells).
  std::string form = "direct";
  int wrapped = -1;
  std::vector<int64_t> wrapped_shape;

  // Filled by the probe.
  std::vector<int64_t> output_shape;
  std::string broadcast_class;   ///< `check`'s class of the node
  std::string form_class;        ///< passes::FormClass: the profile's key
  std::string kind_pattern;      ///< passes::OperandKindPattern
  bool aligned = false;          ///< passes::OperandsAligned
  bool constants_below = false;  ///< passes::ConstantsBelowOutputRank
  bool first_full = false;       ///< passes::FirstOperandFull
  CellResult result = CellResult::kCrashed;
  std::string message;
  double max_abs_error = 0;
  /// The largest error / the error model's bound (runtime/exec/error_model.h) when it ran.
  double bound_ratio = 0;
};

/// A finished probe.
struct ProbeReport {
  std::string engine;
  std::string version;  ///< as the engine reports it, e.g. "4.6.0"
  std::string build;    ///< EngineAdapter::build(): the source it was built from, or empty
  std::vector<ProbeCell> cells;

  /// "<engine>-<major>.<minor>", e.g. "opencv-4.6": how files are named; "<engine>-<date>"
  /// for a version that carries the build's date ("1.0.20260722", "3.6.1+20260820").
  std::string Label() const;
  int64_t Count(CellResult result) const;
};

struct ProbeOptions {
  int parallel = 2;       ///< engine children at once
  double timeout_s = 20;  ///< per cell
  uint64_t seed = 1;
};

/// A cell's model in ONNX text form and the feeds of its graph inputs (seeded by `seed`), as
/// the probe runs it.
struct ProbeModel {
  std::string text;
  engines::NamedTensors feeds;
};
absl::StatusOr<ProbeModel> BuildProbeModel(const ProbeCell& cell, uint64_t seed);

/// The cells a probe runs, in table order (see engine_probe.cc for how they are chosen).
std::vector<ProbeCell> ProbeGrid();

/// The cells a probe runs on engine `engine`: ProbeGrid and ShapeDependentCells, except for an
/// engine without a batch (whose ShapeDependentCells are kept as they are)
/// axis (ncnn, see EngineDropsBatchAxis), where every operand at the output's rank has an
/// outermost extent of 1 (the batch its tools drop; a rank-2 MatMul's A is one row), every
/// lower-rank graph input a leading 1, Gemm's A is one row. Then, for every engine that
/// EngineGetsExtraCells, extra cells: the batch axis itself (a batch of 2), rank-0 and rank-1
/// operands without a batch, Reshape to a constant shape, and one single-node model per op of
/// the exporter corpus (form "op": which ops the converter has).
std::vector<ProbeCell> ProbeGridFor(std::string_view engine);

/// The exact-shape cells (form "exact", engine_probe_shapes.cc says which): Add, Sub, Mul,
/// Div, Pow, Max, Min and Expand at operand shapes with unit axes in every position of ranks 0
/// to 4, which the profile records by where the 1s are (`op.<Op>.<kinds>.shapes`) and the
/// table shows apart. ProbeGridFor adds them for every engine, as they are (batch of 1).
std::vector<ProbeCell> ShapeDependentCells();

/// True for an engine that has no batch axis and drops a leading 1 (ncnn).
bool EngineDropsBatchAxis(std::string_view engine);

/// True for every engine measured with the extra cells of ProbeGridFor (ncnn, MNN): all but
/// OpenCV, whose committed table was measured before them (its importer is part of the
/// engine, whose refusals the grid's own cells show).
bool EngineGetsExtraCells(std::string_view engine);

/// Runs every cell of ProbeGridFor(name) on the engine `make_engine` makes (named `name`, version
/// `version`) and on our executor. Errors only when a cell cannot be built or our executor
/// fails on it (a bug of the grid, named with the cell's model text), or the children cannot
/// be started.
absl::StatusOr<ProbeReport> ProbeEngine(const engines::EngineFactory& make_engine,
                                        const std::string& name, const std::string& version,
                                        const ProbeOptions& options = {});

/// The table in Markdown: how cells are chosen, counts, then one row per cell.
std::string FormatProbeTable(const ProbeReport& report);

/// The profile the measurements give, mechanically (engine_probe.cc says how): per-op rules
/// for every probed op, and global keys that hold for all of them.
targets::TargetProfile ProfileFromProbe(const ProbeReport& report);

/// The profile file: a comment header (engine, version, counts), then FormatTargetProfile.
std::string FormatProbeProfile(const ProbeReport& report);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_ENGINE_PROBE_H_
