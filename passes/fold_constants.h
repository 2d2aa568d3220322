// fold-constants: replaces with an initializer every value of the main graph that can be
// computed without the graph's inputs, so that a static engine (a converter or importer that
// takes shapes only as constants) is never handed a shape to compute at run time. What onnxsim
// does with fixed input shapes, on our own analysis (which knows more: symbolic values through
// Shape, Gather, Concat, Reshape, Conv arithmetic) and with our own executor (one implementation of
// every op).
//
// Before (input x: float[1,3,32,32]):
//   s = Shape(x)
//   n = Gather(s, zero)           # zero: an initializer
//   t = Concat(n, minus_one)      # minus_one: an initializer
//   y = Reshape(x, t)
// After:
//   y = Reshape(x, t)             # t: initializer [1,-1]
//
// What folds, round after round until nothing changes:
//   - Constant nodes become initializers;
//   - Identity nodes go (their readers read the input), and so does Dropout at inference
//     (training_mode omitted or a constant false, its mask unread);
//   - trailing empty optional input names are dropped (an importer may look them up as constants);
//   - Shape/Size of a tensor whose dims (those sliced by start/end) are numbers;
//   - a tensor whose every element the analysis knows as a number (shape arithmetic);
//   - every node whose inputs are all constant (deterministic default-domain ops without
//     subgraphs), computed by PassOptions::evaluator (the bundled executor); without an
//     evaluator, and for a node the executor cannot run, the node stays (a note says why);
//   - an If whose condition is constant is replaced by the branch taken;
//   - then, inside If/Loop/Scan bodies (recursively), a node whose every input is a constant of
//     its own body or of an enclosing graph becomes a Constant node with the same output name;
//     an outer value that is not a constant is never captured (such a node stays).
// A result of an element type the target does not load as a constant (its profile's
// initializer_types) stays a node, and a Constant node of that type stays a Constant node.
// A result larger than PassOptions::constant_fold_limit_bytes stays a node (a note of the pass,
// printed by opt and listed in --report, says so and why).
// Graph outputs are never replaced. What becomes dead is removed (nodes, initializers that are
// not graph inputs, stale value_info). Nodes whose values depend on data (NonZero, TopK with a
// computed k, ...) or on the graph's inputs stay: fold-constants never guesses.
//
// A node that fails on its constant inputs (InvalidArgument from the executor) fails on every
// input: that is an InvalidArgument error naming it.
// Requires: nothing (every graph is valid input). Guarantees: same values at every input the
// model accepts; the graph's interface unchanged; in bodies only nodes with constant inputs
// fold (the rest of a body is left as it is). Idempotent: yes (bodies fold after the main graph,
// whose new constants they may read).
#ifndef ONNX_BCAST_PASSES_FOLD_CONSTANTS_H_
#define ONNX_BCAST_PASSES_FOLD_CONSTANTS_H_

#include "passes/pass.h"

namespace onnx_bcast::passes {

BCAST_DECLARE_PASS(FoldConstants);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_FOLD_CONSTANTS_H_
