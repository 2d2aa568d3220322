// Exact-shape cells of a target profile (issue 35 item 3): the value of an
// `op.<Op>.<kinds>.shapes` line, and the lookup DecideForm makes before the class rules.
//
// A class table decides by broadcast class, but an engine may run `[1,1,1,384] - [1,1,1,1]`
// (inner-axis Sub, which the class refuses) and computes `[1,1,32] - [1,1,1]` with one element
// instead of 32 (a per-channel Sub, which the class accepts). `probe-engine` measures such forms
// with unit axes in every position and writes them as cells keyed by where the 1s are; a node
// whose static shapes match a cell is decided by it, with or without the engine at hand.
#ifndef ONNX_BCAST_TARGETS_SHAPE_CELLS_H_
#define ONNX_BCAST_TARGETS_SHAPE_CELLS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "broadcast/shape.h"
#include "targets/targets.h"

namespace onnx_bcast::targets {

/// Parses one `op.<Op>.<kinds>.shapes` value: comma-separated entries (commas inside `[...]`
/// belong to the shape), each the operands' shapes separated by spaces, then optionally
/// `: refused`, `: wrong` or `: crashed`. Errors (InvalidArgument) name the entry.
absl::StatusOr<std::vector<ShapeCell>> ParseShapeCells(absl::string_view value);

/// The value again, in the form ParseShapeCells reads (entries in order).
std::string FormatShapeCells(absl::Span<const ShapeCell> cells);

/// One cell's shapes: "[1,N] [1,1]".
std::string ShapeCellShapes(const ShapeCell& cell);

/// The cell of measured operand shapes `extents`: each extent of 1 (and 0) kept, every other
/// one `N`, so that the cell decides the same unit pattern at any extents.
ShapeCell ShapeCellOf(absl::Span<const std::vector<int64_t>> extents, FormSupport support);

/// The first cell of `cells` that `inputs` match (every shape static, ranks equal, each dim
/// equal to the cell's number or above 1 for `N`), or null.
const ShapeCell* FindShapeCell(absl::Span<const ShapeCell> cells,
                               absl::Span<const broadcast::Shape> inputs);

}  // namespace onnx_bcast::targets

#endif  // ONNX_BCAST_TARGETS_SHAPE_CELLS_H_
