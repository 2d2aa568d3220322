// Whole-model peer comparison over the committed export corpus (issue #24), run by
// bench/peer/compare_models.sh: for each static model (the corpus with its dims bound by
// `onnx-bcast opt --passes none --dim ...`), alternates rounds of
//   ours - `onnx-bcast run MODEL --bench N --threads T` (its median),
//   ORT  - onnxruntime-node, all graph optimizations, T intra-op threads, N timed runs after a
//          warm-up (median of the profiler's model_run events: the Node binding's copies are
//          not counted),
// and prints the median of each side over the rounds and the ratio ours / ORT.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';

function parseArgs(argv) {
  const args = { threads: [1], runs: 20, rounds: 3, models: [] };
  for (let i = 2; i < argv.length; ++i) {
    const [key, value] = [argv[i], argv[i + 1]];
    switch (key) {
      case '--onnx-bcast': args.onnxBcast = value; ++i; break;
      case '--model': args.models.push(value); ++i; break;
      case '--threads': args.threads = value.split(',').map(Number); ++i; break;
      case '--runs': args.runs = Number(value); ++i; break;
      case '--rounds': args.rounds = Number(value); ++i; break;
      case '--json': args.json = value; ++i; break;
      default: throw new Error(`unknown argument ${key}`);
    }
  }
  return args;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

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

// Deterministic inputs: floats in [-1, 1), integers 0/1 (token ids and masks stay in range).
function input(type, dims) {
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

async function ortRun(model, threads, runs, profileDir) {
  const prefix = `m_${path.basename(model, '.onnx')}_t${threads}_`;
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: 'sequential', enableProfiling: true,
    profileFilePrefix: path.join(profileDir, prefix),
    // No spinning after parallel sections: the spinning thread would steal our core.
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = session.inputMetadata?.find?.((x) => x.name === name);
    const dims = (meta?.shape ?? []).map((d) => (typeof d === 'number' && d > 0 ? d : 1));
    feeds[name] = input(meta?.type ?? 'float32', dims);
  }
  const warm = 3;
  for (let r = 0; r < warm + runs; ++r) await session.run(feeds);
  // The binding returns the profile's path, or nothing: then it is the one file by prefix.
  const returned = await session.endProfiling();
  let file = typeof returned === 'string' && fs.existsSync(returned) ? returned : null;
  if (!file) {
    const files = fs.readdirSync(profileDir).filter((f) => f.startsWith(prefix) && f.endsWith('.json'));
    if (files.length !== 1) throw new Error(`expected one profile ${prefix}*.json, found ${files.length}`);
    file = path.join(profileDir, files[0]);
  }
  await session.release?.();
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(file, { force: true });
  const times = events.filter((e) => e.name === 'model_run').map((e) => e.dur / 1000);
  return median(times.slice(warm));
}

function oursRun(bin, model, threads, runs) {
  const out = execFileSync(bin, ['run', model, '--bench', String(runs), '--threads',
                                 String(threads), '--seed', '1'], { encoding: 'utf8' });
  const m = /bench: runs=\d+ median_ms=([\d.]+)/.exec(out);
  if (!m) throw new Error(`no bench line from onnx-bcast run ${model}: ${out}`);
  return Number(m[1]);
}

async function main() {
  const args = parseArgs(process.argv);
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcast-models-'));
  console.log(`onnxruntime-node ${ort.env.versions?.common ?? ''}; ${args.rounds} alternating ` +
              `rounds of ${args.runs} runs per side; medians in ms`);
  console.log(['model', 'thr', 'ours', 'ORT', 'ours/ORT'].join('\t'));
  const rows = [];
  for (const model of args.models) {
    for (const threads of args.threads) {
      const ours = [], theirs = [];
      try {
        for (let r = 0; r < args.rounds; ++r) {
          ours.push(oursRun(args.onnxBcast, model, threads, args.runs));
          theirs.push(await ortRun(model, threads, args.runs, profileDir));
        }
      } catch (e) {
        console.log([path.basename(model, '.onnx'), threads, 'failed:', String(e.message).split('\n')[0]].join('\t'));
        continue;
      }
      const row = { model: path.basename(model, '.onnx'), threads, ours_ms: median(ours),
                    ort_ms: median(theirs) };
      row.ratio = row.ours_ms / row.ort_ms;
      rows.push(row);
      console.log([row.model, threads, row.ours_ms.toFixed(3), row.ort_ms.toFixed(3),
                   row.ratio.toFixed(2)].join('\t'));
    }
  }
  for (const threads of args.threads) {
    const ratios = rows.filter((r) => r.threads === threads).map((r) => r.ratio);
    if (ratios.length) {
      console.log(`threads ${threads}: median ours/ORT ${median(ratios).toFixed(2)}, worst ` +
                  `${Math.max(...ratios).toFixed(2)} over ${ratios.length} models`);
    }
  }
  fs.rmSync(profileDir, { recursive: true, force: true });
  if (args.json) fs.writeFileSync(args.json, JSON.stringify({ ort: ort.env.versions?.common ?? null, rows }, null, 1));
}

main().catch((e) => { console.error(e); process.exit(1); });
