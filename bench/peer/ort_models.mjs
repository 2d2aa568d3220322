// Whole-model peer comparison over the committed export corpus (issue #24), run by
// bench/peer/compare_models.sh: for each static model (the corpus with its dims bound by
// `onnx-bcast opt --passes none --dim ...`), alternates rounds of
//   ours - `onnx-bcast run MODEL --bench N --threads T` (its median),
//   ORT  - onnxruntime-node, all graph optimizations, T intra-op threads, N timed runs after a
//          warm-up (median of the profiler's model_run events: the Node binding's copies are
//          not counted),
// and prints the median of each side over the rounds and the ratio ours / ORT: the median over
// the rounds of each round's own ratio (pairedRatio). A round's two sides run back to back, and
// the side that goes first alternates from round to round. On a shared VM a slow spell (seen
// here lasting seconds: the same model 0.51 or 0.68 ms a process) then moves both sides of a
// round, or one round, instead of one side's median. With
// --baseline BIN, a second onnx-bcast (say, a build of the previous commit) takes its turn in
// every round too, so a change is measured side by side with its peer. With --check-dir DIR,
// each model's ORT outputs on its inputs are written first as ONNX test data
// (DIR/<model>/test_data_set_0/input_K.pb, output_K.pb), which compare_models.sh runs ours on
// (`onnx-bcast run --test-data`): a fast wrong kernel must not improve the ratio. A model that
// fails on either side is a row with `failed` in the JSON and a line here, never dropped
// silently, and the exit code is 1 when any failed (issue 43 item 6).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  endProfiling, isModelRun, median, oursModelMs, ort, pairedRatio, parseArgs, randomInput,
  roundRatios, sessionFeeds, sessionOptions,
} from './ort_common.mjs';

const kFlags = {
  '--onnx-bcast': ['onnxBcast', 'string'],
  '--model': ['models', 'list'],
  '--threads': ['threads', 'numbers'],
  '--runs': ['runs', 'number'],
  '--rounds': ['rounds', 'number'],
  '--json': ['json', 'string'],
  '--baseline': ['baseline', 'string'],
  '--check-dir': ['checkDir', 'string'],
};

// ONNX TensorProto data types of the ORT tensor types the corpus has.
const kDataType = { float32: 1, uint8: 2, int32: 6, int64: 7, bool: 9, float64: 11 };

// A varint (non-negative, below 2^53) and a length-delimited field, for the few TensorProto
// fields written here: dims (1), data_type (2), name (8), raw_data (9).
function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}
const field = (tag, bytes) => Buffer.concat([varint(tag), varint(bytes.length), bytes]);

// `tensor` (an ort.Tensor) named `name` as a serialized onnx.TensorProto.
export function tensorProto(name, tensor) {
  const type = kDataType[tensor.type];
  if (type === undefined) throw new Error(`output '${name}': ORT type ${tensor.type} not written`);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parts = tensor.dims.map((d) => Buffer.concat([varint(1 << 3), varint(d)]));
  parts.push(Buffer.concat([varint(2 << 3), varint(type)]));
  parts.push(field((8 << 3) | 2, Buffer.from(name, 'utf8')));
  parts.push(field((9 << 3) | 2, raw));
  return Buffer.concat(parts);
}

// ORT on `model` once, on the inputs the timing uses: inputs and outputs as test data under
// `dir/<model>/test_data_set_0`.
async function writeCheckData(model, dir) {
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all' });
  const feeds = sessionFeeds(session, randomInput);
  const outputs = await session.run(feeds);
  const set = path.join(dir, path.basename(model, '.onnx'), 'test_data_set_0');
  fs.mkdirSync(set, { recursive: true });
  session.inputNames.forEach((n, k) => fs.writeFileSync(path.join(set, `input_${k}.pb`), tensorProto(n, feeds[n])));
  session.outputNames.forEach((n, k) => fs.writeFileSync(path.join(set, `output_${k}.pb`), tensorProto(n, outputs[n])));
  await session.release?.();
}

async function ortRun(model, threads, runs, profileDir) {
  const prefix = `m_${path.basename(model, '.onnx')}_t${threads}_`;
  const session = await ort.InferenceSession.create(model, sessionOptions(threads, profileDir, prefix));
  const feeds = sessionFeeds(session, randomInput);
  const warm = 3;
  for (let r = 0; r < warm + runs; ++r) await session.run(feeds);
  const events = await endProfiling(session, profileDir, prefix);
  await session.release?.();
  const times = events.filter(isModelRun).map((e) => e.dur / 1000);
  return median(times.slice(warm));
}

async function main() {
  const args = parseArgs(process.argv, kFlags, { threads: [1], runs: 20, rounds: 5, models: [] });
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcast-models-'));
  console.log(`onnxruntime-node ${ort.env.versions?.common ?? ''}; ${args.rounds} alternating ` +
              `rounds of ${args.runs} runs per side; medians in ms; ours/ORT is the median of ` +
              `the rounds' own ratios`);
  const base = args.baseline !== undefined;
  console.log(['model', 'thr', ...(base ? ['before'] : []), 'ours', 'ORT',
               ...(base ? ['before/ORT'] : []), 'ours/ORT'].join('\t'));
  const rows = [];
  const failed = [];
  for (const model of args.models) {
    const name = path.basename(model, '.onnx');
    if (args.checkDir !== undefined) {
      try {
        await writeCheckData(model, args.checkDir);
      } catch (e) {
        const why = `ORT: ${String(e.message).split('\n')[0]}`;
        console.log([name, '-', 'failed:', why].join('\t'));
        failed.push(name);
        rows.push({ model: name, threads: args.threads[0], failed: why });
        continue;
      }
    }
    for (const threads of args.threads) {
      const before = [], ours = [], theirs = [];
      let side = 'ours';
      try {
        for (let r = 0; r < args.rounds; ++r) {
          const oursTurn = () => {
            side = 'ours';
            if (base) before.push(oursModelMs(args.baseline, model, threads, args.runs));
            ours.push(oursModelMs(args.onnxBcast, model, threads, args.runs));
          };
          if (r % 2 === 0) oursTurn();
          side = 'ORT';
          theirs.push(await ortRun(model, threads, args.runs, profileDir));
          if (r % 2 === 1) oursTurn();
        }
      } catch (e) {
        const why = `${side}: ${String(e.message).split('\n')[0]}`;
        console.log([name, threads, 'failed:', why].join('\t'));
        if (!failed.includes(name)) failed.push(name);
        rows.push({ model: name, threads, failed: why });
        continue;
      }
      const row = { model: path.basename(model, '.onnx'), threads, ours_ms: median(ours),
                    ort_ms: median(theirs), ratio: pairedRatio(ours, theirs),
                    round_ratios: roundRatios(ours, theirs) };
      if (base) {
        row.before_ms = median(before);
        row.before_ratio = pairedRatio(before, theirs);
      }
      rows.push(row);
      console.log([row.model, threads, ...(base ? [row.before_ms.toFixed(3)] : []),
                   row.ours_ms.toFixed(3), row.ort_ms.toFixed(3),
                   ...(base ? [row.before_ratio.toFixed(2)] : []), row.ratio.toFixed(2)].join('\t'));
    }
  }
  for (const threads of args.threads) {
    const ratios = rows.filter((r) => r.threads === threads && r.failed === undefined).map((r) => r.ratio);
    if (ratios.length) {
      console.log(`threads ${threads}: median ours/ORT ${median(ratios).toFixed(2)}, worst ` +
                  `${Math.max(...ratios).toFixed(2)} over ${ratios.length} of ` +
                  `${args.models.length} models`);
    }
  }
  if (failed.length) console.log(`failed: ${failed.length} of ${args.models.length} models: ${failed.join(', ')}`);
  fs.rmSync(profileDir, { recursive: true, force: true });
  if (args.json) fs.writeFileSync(args.json, JSON.stringify({ ort: ort.env.versions?.common ?? null, rows }, null, 1));
  if (failed.length) process.exitCode = 1;
}

main().catch((e) => { console.error(e); process.exit(1); });
