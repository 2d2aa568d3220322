// Every broadcast rule family of the seeds, one function each: ONNX
// multidirectional (numpy) and unidirectional, the Broadcast-3 modes none/pdpd/explicit/
// bidirectional, ONNX opset<7 legacy axis and numpy matmul. An engine's own
// rules live with its adapter in engines/.
// Shapes may hold symbols; results keep the conditions under which they hold.
#ifndef ONNX_BCAST_BROADCAST_RULES_H_
#define ONNX_BCAST_BROADCAST_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "broadcast/condition.h"
#include "broadcast/shape.h"

namespace onnx_bcast::broadcast {

/// The outcome of applying a rule to shapes.
enum class Verdict {
  kOk,           ///< Broadcast is valid for every value of the symbols.
  kError,        ///< Broadcast is invalid (or its conditions contradict).
  kConditional,  ///< Valid exactly when `condition` holds.
  kUnknown,      ///< Cannot be decided: an unknown dim or an unknown rank.
};

/// "ok", "error", "conditional", "unknown".
std::string_view VerdictName(Verdict verdict);

/// A rule's verdict, output shape and, when conditional, the condition.
///
/// Precedence when several axes disagree: an error anywhere (including a
/// contradiction among the collected conditions) wins, then unknown, then
/// conditional. Errors report the leftmost failing axis.
struct BroadcastResult {
  Verdict verdict = Verdict::kOk;
  /// Best known output shape, also filled for conditional/unknown (and, as far
  /// as possible, for error; failing axes are "?").
  Shape output;
  /// Non-empty only for kConditional.
  ConditionSet condition;
  /// For kError: names the axis and both extents, e.g. "axis 1: 3 vs 4";
  /// for kUnknown: why; for kConditional: the axes that need conditions, e.g.
  /// "axis 0: N vs 5"; empty for kOk.
  std::string reason;
  /// For kError: the failing axis in output (right-aligned) coordinates, or -1
  /// when the error is not about one axis (rank mismatch, bad attribute, K of
  /// matmul, contradiction).
  int error_axis = -1;

  bool ok() const { return verdict == Verdict::kOk; }
  /// E.g. "ok [2,3]", "conditional [5,3] if N ∈ {1, 5}", "error: axis 1: 3 vs 4".
  std::string ToString() const;
};

/// Rule families, for reports.
enum class RuleFamily {
  kNumpy,
  kUnidirectional,
  kNone,
  kPdpd,
  kLegacyAxis,
  kBidirectional,
  kExplicit,
  kMatMul,
};

/// "numpy", "unidirectional", "none", "pdpd", "legacy-axis", "bidirectional",
/// "explicit", "matmul".
std::string_view RuleName(RuleFamily rule);
/// The inverse of `RuleName`.
std::optional<RuleFamily> RuleFromName(std::string_view name);

/// ONNX multidirectional broadcasting (numpy), n-ary: Add/Sub/.../Sum/Mean/
/// Max/Min and Where's three inputs. Right-aligned; each axis must be 1 or a
/// common extent (0 with 1 gives 0; 0 with 3 is an error). Per axis with
/// dim expressions (expr.h): dims provably 1 drop out, and a single remaining
/// dim is the output whatever it is (even unknown: `[?,65,?]` with `[]` is
/// ok); {N,N} -> N; {N,5} -> 5 if N ∈ {1, 5}; {N,M} -> max(M, N) if
/// `N == M or N == 1 or M == 1` (pairwise clauses for three or more; atoms
/// that can never hold are left out, and when none can hold it is an error,
/// e.g. 3 vs N+3). Unknown dims/ranks otherwise give kUnknown with the best
/// output (unknown rank in, unknown rank out). No inputs is an error.
BroadcastResult BroadcastNumpy(absl::Span<const Shape> inputs);
/// The same over shapes held elsewhere (no copies).
BroadcastResult BroadcastNumpyOf(absl::Span<const Shape* const> inputs);

/// ONNX unidirectional broadcasting of `b` to `target` (Gemm's C to (M,N),
/// PRelu's slope to X). Output is `target`; `b` may have lower rank (1s are
/// prepended) but never higher; each b dim must be 1 or equal. Symbols:
/// b=N vs 5 -> N ∈ {1, 5}; b=5 vs N -> N == 5; b=N vs M -> N == M or N == 1.
BroadcastResult BroadcastUnidirectional(const Shape& target, const Shape& b);

/// Broadcast-3 `numpy` mode: `input` broadcast to `target` only.
/// Identical to `BroadcastUnidirectional(target, input)`.
BroadcastResult BroadcastNumpyOneWay(const Shape& input, const Shape& target);

/// Broadcast-3 `none`: all shapes must match exactly (symbols give equalities).
BroadcastResult BroadcastNone(absl::Span<const Shape> inputs);

/// Broadcast-3 `pdpd`: rank(b) <= rank(a); `axis` -1 means rank(a) - rank(b)
/// (computed before trimming); trailing 1s of b are ignored (they may run past
/// the last axis of a); b's dims must match a's starting at `axis`, where a b
/// dim of 1 broadcasts. Output is a's shape. `axis` < -1 is an error.
BroadcastResult BroadcastPdpd(const Shape& a, const Shape& b, int64_t axis);

/// ONNX opset<7 binary ops (Add-6 etc.). `broadcast` false: shapes must be
/// equal (`BroadcastNone`). `broadcast` true: b is placed on a starting at
/// `axis` (default: suffix-aligned), the `BroadcastPdpd` rule, so a
/// 1-element b (scalar, [1], [1,1]) always works. Note: the ONNX-1 text says
/// "1-dim expansion doesn't work yet"; like the `pdpd` mode we accept b dims
/// of 1 anywhere since the numpy rewrite computes the same values.
BroadcastResult BroadcastLegacyOnnx(const Shape& a, const Shape& b, bool broadcast,
                                    std::optional<int64_t> axis);

/// The ONNX Unsqueeze axes to apply to b so that numpy broadcasting of (a, b')
/// computes what legacy `broadcast=1, axis` computes: b needs rank
/// rank(a) - axis, so trailing axes [rank(b), ..., rank(a) - axis - 1] are
/// added. E.g. a (1,3,4,5), b (3,), axis 1 -> {1, 2}. Empty when none are
/// needed. nullopt when ranks are unknown, the axis is invalid, or b's
/// trailing 1s run past a's last axis (then use `LegacyToNumpyBShape`). Does
/// not check the dims; call `BroadcastLegacyOnnx` first.
std::optional<std::vector<int64_t>> LegacyToNumpyUnsqueezeAxes(const Shape& a, const Shape& b,
                                                               std::optional<int64_t> axis);

/// The shape to Reshape b to for the same purpose as
/// `LegacyToNumpyUnsqueezeAxes`, always expressible: b with overhanging
/// trailing 1s dropped and trailing 1s added up to rank rank(a) - axis.
/// nullopt when ranks are unknown or the axis is invalid.
std::optional<Shape> LegacyToNumpyBShape(const Shape& a, const Shape& b,
                                         std::optional<int64_t> axis);

/// ONNX Expand / Broadcast-3 `bidirectional`: `input * ones(target_shape)`, the
/// numpy rule on two shapes. The output may differ from `target_shape` when it
/// has 1s or a lower rank than `input`.
BroadcastResult BroadcastBidirectional(const Shape& input, const Shape& target_shape);

/// Broadcast-3 `explicit`: `axes_mapping[k]` is the output axis of
/// input axis k; it must have rank(input) entries, strictly increasing, each in
/// [0, rank(target)). Each input dim must be 1 or equal to the target dim at its
/// mapped axis. Output is `target`.
BroadcastResult BroadcastExplicit(const Shape& input, const Shape& target,
                                  absl::Span<const int64_t> axes_mapping);

/// numpy matmul: rank-0 operands are errors; a 1-D a is promoted to (1,K) and
/// b to (K,1), the added dims removed from the output; K must be equal (symbols
/// give equalities; error_axis -1 and reason "K: 3 vs 4"); batch dims broadcast
/// with the numpy rule (error_axis in output coordinates).
BroadcastResult BroadcastMatMul(const Shape& a, const Shape& b);

/// Report classes of an elementwise broadcast.
enum class BroadcastClass {
  kSame,            ///< Every input already has the output shape.
  kScalar,          ///< Broadcast inputs are scalars or all 1s.
  kPerChannel,      ///< Output rank >= 3, broadcast inputs vary only on axis 1
                    ///< ([N,C,H,W] with [1,C,1,1] or [C,1,1]).
  kInnerAxis,       ///< Broadcast inputs match a trailing run of output dims
                    ///< ([16384,1024] with [1024] or [1,1024]).
  kOuterAxis,       ///< Broadcast inputs match a leading run, then 1s
                    ///< ([16384,1024] with [16384,1]).
  kBidirectional,   ///< No input has the output shape ([256,1,1024] + [1,256,1024]).
  kGeneral,         ///< Anything else, or mixed classes.
  kLegacyAxis,      ///< Decided by callers from the op (opset<7 axis broadcast).
  kUnidirectional,  ///< Decided by callers from the op (Gemm C, PRelu slope).
  kMatMulBatch,     ///< Decided by callers from the op (MatMul's batch dims).
  kInvalid,         ///< Decided by callers: the broadcast is a proven error.
};

/// "same", "scalar", "per-channel", "inner-axis", "outer-axis", "bidirectional",
/// "general", "legacy-axis", "unidirectional", "matmul-batch", "invalid".
std::string_view BroadcastClassName(BroadcastClass broadcast_class);

/// Classifies how `inputs` broadcast to `output` (both as given, e.g. from a
/// `BroadcastNumpy` result). Dims are compared structurally.
BroadcastClass Classify(absl::Span<const Shape> inputs, const Shape& output);

/// numpy broadcasting of concrete shapes for the runtime. InvalidArgument
/// naming the axis and extents ("axis 1: 3 vs 4") on mismatch, on a negative
/// extent, or with no shapes.
absl::StatusOr<std::vector<int64_t>> BroadcastConcrete(
    absl::Span<const std::vector<int64_t>> shapes);

}  // namespace onnx_bcast::broadcast

#endif  // ONNX_BCAST_BROADCAST_RULES_H_
