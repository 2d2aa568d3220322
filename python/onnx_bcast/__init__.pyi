"""Type stubs of onnx_bcast (the extension onnx_bcast._core, re-exported by the package).

The report dicts of check(), optimize() and verify() are the CLI's JSON documents (`onnx-bcast
check --json`, `onnx-bcast opt --report`, `onnx-bcast verify --json`; docs/report-schema.md)
plus 'text'; the TypedDicts below spell out their keys.
"""
import os
from typing import Any, Literal, Mapping, Optional, Sequence, TypedDict, Union, overload

import numpy
import numpy.typing
import onnx

__version__: str

StrPath = Union[str, os.PathLike[str]]
Buffer = Union[bytes, bytearray, memoryview]
Model = Union[onnx.ModelProto, Buffer, StrPath]
# A shape as the CLI's JSON writes it: ints and symbol names ("N", "?" for an unknown dim).
Shape = list[Union[int, str]]
# The values of one input's random elements: (lo, hi), or the CLI's 'LO:HI' / 'LO:HI:int'.
InputRangeSpec = Union[tuple[float, float], str]


class SymbolSet(TypedDict):
    text: str
    small: list[int]
    threshold: int
    period: int
    residues: list[int]


class _ConditionBase(TypedDict):
    text: str
    symbols: list[str]
    # atoms {'lhs', 'rhs', 'symbols'} (dim expressions), plus 'symbol' and 'equals' or
    # 'equals_symbol'
    clauses: list[list[dict[str, Any]]]
    values: dict[str, list[int]]
    sets: dict[str, SymbolSet]


class Condition(_ConditionBase, total=False):
    # combined_condition only: {symbol: {'set', 'clauses', 'imposed_by': [{'node', 'op',
    # 'graph', 'condition'}]}}
    per_symbol: dict[str, dict[str, Any]]


class NodeAtDims(TypedDict):
    outcome: Literal["holds", "fails", "conditional", "unknown"]
    inputs: list[Optional[Shape]]
    message: str
    unbound: list[str]


class CheckAtDims(TypedDict):
    bindings: dict[str, int]
    holds: int
    fails: int
    conditional: int
    unknown: int
    unbound: list[str]
    combined: Optional[bool]
    first_failure: Optional[dict[str, str]]  # {'node', 'op', 'graph', 'message'}


class NodeInput(TypedDict):
    name: str
    shape: Optional[Shape]


class _NodeBase(TypedDict):
    node: str
    op: str
    graph: str
    path: str  # the compact path people read: 'If#0/then/Add#1'
    opset: int
    inputs: list[NodeInput]
    output: Optional[Shape]
    rule: str
    verdict: Literal["ok", "error", "conditional", "unknown"]
    condition: Optional[Condition]
    message: str


# 'class' and 'pass' are keywords: those keys are declared in the functional form.
_NodeClass = TypedDict("_NodeClass", {"class": str})


class NodeVerdict(_NodeBase, _NodeClass, total=False):
    lint: list[dict[str, str]]  # with lint=True: [{'class', 'message'}]
    at_dims: NodeAtDims  # with dims=


class CheckSummary(TypedDict, total=False):
    nodes: int
    ok: int
    error: int
    conditional: int
    unknown: int
    lint: int  # with lint=True


class _CheckReportBase(TypedDict):
    schema_version: int
    kind: Literal["check"]
    model: str
    nodes: list[NodeVerdict]
    combined_condition: Optional[Condition]
    contradiction: Optional[str]
    summary: CheckSummary
    text: str


class CheckReport(_CheckReportBase, total=False):
    at_dims: CheckAtDims  # with dims=


class Rewrite(TypedDict):
    node: str
    output: str  # the node's first output: an unnamed node's identity across insertions
    op: str
    action: str
    tensor: str
    before: str
    after: str
    detail: str
    bytes: int


_PassBase = TypedDict("_PassBase", {"pass": str})


class PassReport(_PassBase):
    seconds: float
    nodes_inserted: int
    nodes_removed: int
    initializers_rewritten: int
    bytes_added: int
    rewrites: list[Rewrite]


class ModelStats(TypedDict):
    nodes: int
    initializers: int
    initializer_bytes: int
    opset: int


class OptimizeSummary(TypedDict):
    rewrites: int
    before: ModelStats
    after: ModelStats
    violations: list[str]
    error: Optional[str]


class _OptimizeReportBase(TypedDict):
    schema_version: int
    kind: Literal["opt"]
    model: str
    output: Optional[str]
    target: Optional[str]
    passes: list[PassReport]
    summary: OptimizeSummary
    text: str


class OptimizeReport(_OptimizeReportBase, total=False):
    # Ops of the model the target's engine has no layer for (its measured profile's list), with
    # their node counts; not broadcast forms, so they never fail optimize().
    unsupported_ops: dict[str, int]
    # The target's engine on the result (absent when the target names no engine).
    engine: EngineCheck
    # Nodes the table puts outside the target's form that the model as given already had, where
    # the engine runs the model as given and matches: never a refusal.
    waived: list[str]
    # summary['violations'] as records.
    violation_details: list[ViolationRecord]
    # Only in the report of a refused rewrite (TargetNotMetError.report, EngineCheckError.report,
    # and `opt --report` on a refusal): the exit code the CLI gives and why.
    refused: Refusal


class Refusal(TypedDict):
    exit: int
    why: str


class EngineCheck(TypedDict):
    outcome: Optional[str]  # "ran", "wrong", "refused", "crashed", "timed-out"; None: not run
    line: Optional[str]
    dims: Optional[str]
    divergence: Optional[str]  # the first node that differs on the engine
    note: Optional[str]  # why it was not run


class ViolationRecord(TypedDict):
    graph: str
    node: str
    op: str
    shapes: str
    rule: str
    cannot_prove: bool
    hint: Optional[str]  # what makes it fit: "bind N, H with dims="; None: the rule says none


class Comparison(TypedDict):
    match: bool
    elements: int
    mismatches: int
    max_abs_error: Union[float, str]  # "nan"/"inf" when not finite
    max_abs_at: Optional[str]
    max_rel_error: Union[float, str]
    max_rel_at: Optional[str]
    max_ulp: int
    passing_atol: Union[float, str, None]  # the smallest atol that passes; None: not applicable
    passing_rtol: Union[float, str, None]
    bound_ratio: Union[float, str, None]  # largest error / the error model's bound; None: not used
    message: Optional[str]


class OutputComparison(Comparison):
    output: str


class Sample(TypedDict):
    sample: str
    match: bool
    expect_failure: bool
    skipped: bool  # not run: the original rejects these inputs ('note' says why)
    error: Optional[str]
    note: Optional[str]
    outputs: list[OutputComparison]


class Tolerance(TypedDict):
    exact: bool
    rtol: float
    atol: float
    error_model: bool  # compared under the error model (float64 reference, per-element bound)
    margin: float
    reference_note: Optional[str]  # why no float64 reference could be made (then rtol/atol)


_DivergenceBase = TypedDict("_DivergenceBase", {"pass": Optional[str]})


class Divergence(_DivergenceBase):
    sample: str
    tensor: str
    node: str
    node_output: str
    op: str
    input_shapes: list[str]
    rewrite: Optional[str]
    comparison: Comparison


class LocalCheck(TypedDict):
    node: str
    op: str
    match: bool
    skipped: bool
    detail: str


class BoundDim(TypedDict):
    symbol: str
    value: int
    by: str


class VerifyReport(TypedDict):
    schema_version: int
    kind: Literal["verify"]
    original: str
    rewritten: str
    match: bool
    mode: Literal["whole-model", "local"]
    note: Optional[str]
    tolerance: Tolerance
    bound: list[BoundDim]
    structural: list[str]
    samples: list[Sample]
    max_abs_error: Union[float, str]
    max_ulp: int
    divergence: Optional[Divergence]
    local: list[LocalCheck]
    text: str


class TargetNotMetError(NotImplementedError):
    """optimize() left nodes outside the target's form (allow_partial=False): .violations lists
    them as dicts, .report is the refused rewrite's report."""
    report: OptimizeReport
    violations: list[ViolationRecord]
    engine: Optional[EngineCheck]


class EngineCheckError(RuntimeError):
    """optimize()'s result does not run correctly on the target's engine: .engine is the engine
    check's dict, .report the refused rewrite's report."""
    report: OptimizeReport
    violations: list[ViolationRecord]
    engine: Optional[EngineCheck]


def list_passes() -> list[tuple[str, str]]:
    """Every rewrite pass as (name, one-line summary), in the registry's order."""


def list_targets() -> list[tuple[str, str]]:
    """Every built-in target as (name, 'pass,pass,...'), the passes it runs in order."""


def check(model: Model, *, lint: bool = False, base_dir: str = '.',
          dims: Optional[Mapping[str, int]] = None) -> CheckReport:
    """Gives every broadcasting node a verdict: 'ok', 'error', 'conditional' or 'unknown'.

    model is an onnx.ModelProto, serialized bytes or a path (.onnx, or .onnxtxt text form).
    Returns the document of `onnx-bcast check --json` as a dict: 'model', 'nodes' (each with
    'node', 'op', 'graph', 'path', 'opset', 'inputs' [{'name', 'shape'}], 'output', 'rule', 'class',
    'verdict', 'condition', 'message', and 'lint' with lint=True), 'combined_condition',
    'contradiction' and 'summary' {'nodes', 'ok', 'error', 'conditional', 'unknown'}; plus 'text',
    the report the CLI prints. Shapes are lists of ints and symbol names (None: unknown rank).
    Conditions are data: 'symbols', 'clauses' of atoms {'lhs', 'rhs', 'symbols'}, exact one-symbol
    'sets'; combined_condition adds 'per_symbol' with the nodes imposing each part.
    dims={'H': 32, ...} evaluates every node at those symbol values, as `check --dim`: each node
    gets 'at_dims' {'outcome' ('holds'|'fails'|'conditional'|'unknown'), 'inputs', 'message',
    'unbound'} and the document 'at_dims' {'bindings', 'holds', 'fails', 'conditional', 'unknown',
    'unbound', 'combined', 'first_failure'}; a name that is not a symbol of the model, or a value
    below 1, raises ValueError listing the model's symbols.
    Broadcast errors are data (summary['error'] > 0); an unreadable model raises ValueError or
    FileNotFoundError.
    """


@overload
def optimize(model: onnx.ModelProto, *, target: Optional[str] = None,
             passes: Optional[Sequence[str]] = None, target_file: Optional[str] = None,
             output: Optional[StrPath] = None, fold_limit_bytes: int = 4096,
             verify_each: bool = False, external_data: bool = False, base_dir: str = '.',
             allow_partial: bool = False, dims: Optional[dict[str, int]] = None,
             input_shapes: Optional[dict[str, Sequence[int]]] = None,
             live_probe: bool = True, verify_engine: bool = True,
             require_engine: bool = False, probe_cache: Optional[StrPath] = None,
             input_ranges: Optional[Mapping[str, InputRangeSpec]] = None
             ) -> tuple[onnx.ModelProto, OptimizeReport]:
    """Rewrites the broadcasts for a target (list_targets(); default "explicit") or a list of passes
    (list_passes(); ["none"]: load and save only).

    Returns what it was given: (ModelProto, report) for an onnx.ModelProto (the argument is not
    modified), (bytes, report) for serialized bytes; for a path the rewritten model is written to
    output= (required then) and only the report is returned. With output= an in-memory result is
    saved there too. The report is the document of `onnx-bcast opt --report` as a dict: 'model',
    'output', 'target', 'passes' (each with 'pass', 'seconds', 'nodes_inserted', 'nodes_removed',
    'initializers_rewritten', 'bytes_added', 'rewrites'), 'summary' {'rewrites', 'before', 'after',
    'violations', 'error'}; plus 'text', the lines the CLI prints. Pass it to verify(report=...) to
    name the pass behind a divergence. An unknown pass or target raises ValueError; a node left
    outside the target's form raises TargetNotMetError (a NotImplementedError) naming every such
    node, unless allow_partial=True (then summary['violations'] lists them); the exception's
    .violations lists them as dicts {'graph', 'node', 'op', 'shapes', 'rule', 'cannot_prove',
    'hint'} and .report is the refused rewrite's report.
    dims={'H': 640, ...} and input_shapes={'x': [1, 3, 640, 640]} bind symbolic dims before the
    passes, as `opt --dim` and `--input-shape`: the result has those numbers in its declared shapes
    (report 'dims'); an unknown name, a rank mismatch, or a binding that breaks a broadcast raises
    ValueError naming it.
    The target's engine decides as in the CLI where this module was built with it: live_probe runs
    broadcast forms on it at their exact shapes; verify_engine runs the result on it before
    returning (report 'engine' {'outcome', 'line', 'dims', 'divergence', 'note'}), and a result it
    refuses or computes wrongly raises EngineCheckError (a RuntimeError) naming the first node that
    differs, with .engine and .report;
    require_engine=True raises ValueError where the build has no such engine (else 'engine' 'note'
    says it was not run). input_ranges={'mask': (0, 1)} sets the values of the engine check's random
    inputs, as run(input_ranges=...).
    """
@overload
def optimize(model: Buffer, *, target: Optional[str] = None,
             passes: Optional[Sequence[str]] = None, target_file: Optional[str] = None,
             output: Optional[StrPath] = None, fold_limit_bytes: int = 4096,
             verify_each: bool = False, external_data: bool = False, base_dir: str = '.',
             allow_partial: bool = False, dims: Optional[dict[str, int]] = None,
             input_shapes: Optional[dict[str, Sequence[int]]] = None,
             live_probe: bool = True, verify_engine: bool = True,
             require_engine: bool = False, probe_cache: Optional[StrPath] = None,
             input_ranges: Optional[Mapping[str, InputRangeSpec]] = None
             ) -> tuple[bytes, OptimizeReport]: ...
@overload
def optimize(model: StrPath, *, target: Optional[str] = None,
             passes: Optional[Sequence[str]] = None, target_file: Optional[str] = None,
             output: StrPath, fold_limit_bytes: int = 4096,
             verify_each: bool = False, external_data: bool = False, base_dir: str = '.',
             allow_partial: bool = False, dims: Optional[dict[str, int]] = None,
             input_shapes: Optional[dict[str, Sequence[int]]] = None,
             live_probe: bool = True, verify_engine: bool = True,
             require_engine: bool = False, probe_cache: Optional[StrPath] = None,
             input_ranges: Optional[Mapping[str, InputRangeSpec]] = None
             ) -> OptimizeReport: ...


def run(model: Model, inputs: Optional[dict[str, numpy.typing.ArrayLike]] = None, *,
        random: bool = False, seed: int = 0, dims: Optional[dict[str, int]] = None,
        threads: int = 1, base_dir: str = '.',
        input_ranges: Optional[Mapping[str, InputRangeSpec]] = None) -> dict[str, numpy.ndarray]:
    """Runs the model on the bundled reference executor.

    inputs maps input names to numpy arrays, checked against the declared types and shapes, each
    symbol bound to one value across inputs (and dims=). With random=True, inputs not given are
    seeded random values (symbolic dims bound from dims=, then from the given inputs, else 1):
    floats in [-1, 1), integers 0..9, or per input_ranges={'mask': (0, 1), 'ids': '0:99'}: floats
    in [lo, hi], integers and bools whole numbers in it ('LO:HI:int' gives floats whole numbers).
    Returns {output name: numpy array} in graph order (bfloat16 as uint16 bit patterns).
    """


def verify(original: Model, rewritten: Model, *, samples: int = 3, seed: int = 0,
           rtol: Optional[float] = None, atol: Optional[float] = None, edge_cases: bool = False,
           local: bool = False, test_data: Optional[Sequence[StrPath]] = None, threads: int = 1,
           report: Union[OptimizeReport, dict[str, Any], StrPath, None] = None,
           base_dir: str = '.', dims: Optional[Mapping[str, int]] = None,
           input_ranges: Optional[Mapping[str, InputRangeSpec]] = None) -> VerifyReport:
    """Runs both models on the same inputs and compares every output.

    Inputs are seeded random samples, or the ONNX test_data_set directories of test_data, and only
    inputs both models accept: a dim one model declares as a number (optimize(dims=...) wrote it)
    is bound to it in both ('bound' says so), and dims={'N': 2, ...} binds symbols explicitly. A
    name neither model has, a value a declaration contradicts, or two models that accept no common
    input raise ValueError naming the dims. Without
    rtol and atol the comparison is bit-exact when only data-movement ops changed, else rtol 1e-3,
    atol 1e-7. report is the dict optimize() returned or the path of an `opt --report` file; it
    names the pass behind a divergence (a report that cannot be read or parsed raises). Returns
    the document of `onnx-bcast verify --json` as a dict: 'match', 'mode', 'tolerance',
    'samples' (each with its 'outputs' compared), 'max_abs_error', 'max_ulp', 'divergence' (with
    'pass' and 'rewrite' from the report), 'local', ...; plus 'text', the lines the CLI prints. A
    mismatch is match=False, not an exception; a sample whose inputs the original rejects is listed
    with 'skipped' True and the original's error in 'note'. input_ranges={'mask': (0, 1)} sets the
    random inputs' values, as run(input_ranges=...).
    """
