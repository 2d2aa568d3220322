// What the two onnxruntime peer benchmarks share (ort_kernel.mjs: single-node kernels, issue
// #7; ort_models.mjs: the export corpus, issue #24): argument parsing from a flag table,
// medians, input tensors, session options and the profiler's events.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';

export { ort };

// Flag kinds: 'string', 'number', 'numbers' (comma list), 'list' (repeatable), 'regex'.
const kParse = {
  string: (v) => v,
  number: Number,
  numbers: (v) => v.split(',').map(Number),
  regex: (v) => new RegExp(v),
};

// Parses process.argv against `flags` ({'--name': [key, kind]}) over a copy of `defaults`.
export function parseArgs(argv, flags, defaults) {
  const args = structuredClone(defaults);
  for (let i = 2; i < argv.length; i += 2) {
    const spec = flags[argv[i]];
    if (!spec) throw new Error(`unknown argument ${argv[i]}`);
    if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
    const [key, kind] = spec;
    if (kind === 'list') (args[key] ??= []).push(argv[i + 1]);
    else args[key] = kParse[kind](argv[i + 1]);
  }
  return args;
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

// Side a against side b measured in rounds (a[r] and b[r] back to back): the median of the
// rounds' own ratios a[r] / b[r]. A slow spell of a shared machine then moves both sides of a
// round, or one round, rather than one side's median.
export const roundRatios = (a, b) => a.map((x, r) => x / b[r]);
export const pairedRatio = (a, b) => median(roundRatios(a, b));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ONNX type strings (session metadata) and ORT dtype names to [ORT dtype, typed array].
const kTypes = {
  'tensor(float)': ['float32', Float32Array],
  'tensor(int64)': ['int64', BigInt64Array],
  'tensor(int32)': ['int32', Int32Array],
  'tensor(bool)': ['bool', Uint8Array],
  float32: ['float32', Float32Array],
  int64: ['int64', BigInt64Array],
  int32: ['int32', Int32Array],
  bool: ['bool', Uint8Array],
};

// Inputs the kernel cases use: small positive values (no division by zero), bools 2/3 true.
export function patternInput(type, dims) {
  const [name, Ctor] = kTypes[type] ?? kTypes.float32;
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Ctor(n);
  for (let i = 0; i < n; ++i) {
    if (name === 'float32') data[i] = (1 + (i % 7)) * 0.25;
    else if (name === 'int64') data[i] = BigInt(1 + (i % 7));
    else if (name === 'bool') data[i] = i % 3 !== 0 ? 1 : 0;
    else data[i] = 1 + (i % 7);
  }
  return new ort.Tensor(name, data, dims);
}

// Deterministic model inputs: floats in [-1, 1), integers 0/1 (token ids and masks in range).
export function randomInput(type, dims) {
  const [name, Ctor] = kTypes[type] ?? kTypes.float32;
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Ctor(n);
  let x = 12345;
  for (let i = 0; i < n; ++i) {
    x = (x * 1103515245 + 12345) % 2147483648;
    if (name === 'float32') data[i] = x / 1073741824 - 1;
    else if (name === 'int64') data[i] = BigInt(x % 2);
    else data[i] = x % 2;
  }
  return new ort.Tensor(name, data, dims);
}

// One tensor per session input from `fill(type, dims)`; symbolic dims become 1.
export function sessionFeeds(session, fill) {
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = session.inputMetadata?.find?.((x) => x.name === name);
    const dims = (meta?.shape ?? []).map((d) => (typeof d === 'number' && d > 0 ? d : 1));
    feeds[name] = fill(meta?.type ?? 'float32', dims);
  }
  return feeds;
}

// All graph optimizations, `threads` intra-op threads, profiling into profileDir/prefix*.
export function sessionOptions(threads, profileDir, prefix) {
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    enableProfiling: true,
    profileFilePrefix: path.join(profileDir, prefix),
    // ORT's pool spins after each parallel section; off, so the spinning thread does not
    // steal the core our next sample runs on (costs ORT at most a wake-up per call).
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
}

// Ends profiling and returns the trace's events (the file is removed). onnxruntime-node's
// endProfiling() may return no name: then it is the one file in `dir` starting with `prefix`.
export async function endProfiling(session, dir, prefix) {
  const returned = await session.endProfiling();
  let file = typeof returned === 'string' && fs.existsSync(returned) ? returned : null;
  if (!file) {
    const files = fs.readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.json'));
    if (files.length !== 1) throw new Error(`expected one profile ${prefix}*.json, found ${files.length}`);
    file = path.join(dir, files[0]);
  }
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(file, { force: true });
  return events;
}

export const isKernel = (e) => e.cat === 'Node' && String(e.name).endsWith('_kernel_time');
export const isModelRun = (e) => e.cat === 'Session' && e.name === 'model_run';

// `onnx-bcast run MODEL --bench RUNS --threads T`'s median in ms.
export function oursModelMs(bin, model, threads, runs) {
  const out = execFileSync(bin, ['run', model, '--bench', String(runs), '--threads', String(threads),
                                 '--seed', '1'], { encoding: 'utf8' });
  const m = /bench: runs=\d+ median_ms=([\d.]+)/.exec(out);
  if (!m) throw new Error(`no bench line from onnx-bcast run ${model}: ${out}`);
  return Number(m[1]);
}
