// The probe's exact-shape cells (issue 35 item 3): their place in the profile and in the
// table. ShapeDependentCells (engine_probe.h) says which cells are run.
#ifndef ONNX_BCAST_ENGINES_ENGINE_PROBE_SHAPES_H_
#define ONNX_BCAST_ENGINES_ENGINE_PROBE_SHAPES_H_

#include <string>
#include <vector>

#include "engines/engine_probe.h"
#include "targets/targets.h"

namespace onnx_bcast::engines {

/// The profile's support for a cell's result (runs and matches -> kRuns).
targets::FormSupport FormSupportOf(CellResult r);

/// wrong > crashed > refused > runs (3, 2, 1, 0), as the class rules rank failures; the probe
/// keeps the worst cell of a rule by it.
int Severity(targets::FormSupport s);

/// Adds the exact cells (form "exact") to `profile`'s per-op rules as
/// `op.<Op>.<kinds>.shapes` entries, keyed by where their 1s are (passes::ShapeCellOf), in grid
/// order; two cells of one key keep the worse result (wrong > crashed > refused > runs).
void AddShapeCells(const std::vector<const ProbeCell*>& exact, targets::TargetProfile* profile);

/// The table's section on the exact cells: per operand kinds and order, a matrix of shapes by
/// op, each result marked where the profile's class rules alone (what opt decided without the
/// engine before the cells) decide otherwise, and the counts. Empty without exact cells.
std::string FormatShapeCellSection(const ProbeReport& report, const targets::TargetProfile& profile);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_ENGINE_PROBE_SHAPES_H_
