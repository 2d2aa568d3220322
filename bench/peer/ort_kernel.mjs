// Peer comparison of issue #7 (run by bench/peer/compare.sh): for each case and thread
// count, interleaves sample by sample
//   ours    - BinaryOp on a cached plan, timed inside bench_peer_driver (a child process);
//   ORT     - onnxruntime's kernel time for the same single-node model, read from its
//             profiler ("<node>_kernel_time" events, microseconds), so the Node binding's
//             input/output copies are not counted;
//   STREAM  - a[i] = b[i] + c[i] over the case's float32 byte volume, ordinary and
//             non-temporal stores (the bandwidth limit is the faster of the two),
// and prints medians and ratios. With --e2e it also times whole models: `onnx-bcast run
// MODEL --bench` against ORT's "model_run" profiler event, same thread count.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  endProfiling, isKernel, isModelRun, median, oursModelMs, ort, parseArgs, patternInput,
  sessionFeeds, sessionOptions, sleep,
} from './ort_common.mjs';

const kFlags = {
  '--driver': ['driver', 'string'],
  '--models': ['models', 'string'],
  '--cases': ['cases', 'string'],
  '--threads': ['threads', 'numbers'],
  '--reps': ['reps', 'number'],
  '--json': ['json', 'string'],
  '--e2e': ['e2e', 'list'],
  '--e2e-runs': ['e2eRuns', 'number'],
  '--onnx-bcast': ['onnxBcast', 'string'],
  '--only': ['only', 'regex'],
};

// One line in, one line out, to the C++ driver.
class Driver {
  constructor(binary) {
    this.child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }
  async ask(command) {
    this.child.stdin.write(command + '\n');
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`driver exited on: ${command}`);
    const [status, ...rest] = value.split(' ');
    if (status !== 'ok') throw new Error(`driver: ${value}`);
    return rest;
  }
  close() { this.child.stdin.end('quit\n'); }
}

async function runKernelCase(driver, c, threads, args, profileDir) {
  const tiny = !c.large;
  const session = await ort.InferenceSession.create(
      path.join(args.models, `${c.id}.onnx`), sessionOptions(threads, profileDir, `${c.id}_t${threads}_`));
  const feeds = { A: patternInput(c.dtype, c.a), B: patternInput(c.dtype, c.b) };
  const warm = 3;
  const reps = tiny ? args.reps * 4 : args.reps;
  const ours = [], plain = [], nt = [], mplain = [], mnt = [];
  const batch = tiny ? args.tinyBatch : 1;
  for (let r = 0; r < warm + reps; ++r) {
    const [o] = await driver.ask(`ours ${threads} 1 ${batch}`);
    await session.run(feeds);
    await sleep(2);  // let ORT's workers go idle before our next sample
    if (!tiny) {
      const [p] = await driver.ask(`stream ${threads} 0 1`);
      const [n] = await driver.ask(`stream ${threads} 1 1`);
      const [mp] = await driver.ask(`matched ${threads} 0 1`);
      const [mn] = await driver.ask(`matched ${threads} 1 1`);
      if (r >= warm) {
        plain.push(Number(p)); nt.push(Number(n)); mplain.push(Number(mp)); mnt.push(Number(mn));
      }
    }
    if (r >= warm) ours.push(Number(o));
  }
  const events = await endProfiling(session, profileDir, `${c.id}_t${threads}_`);
  await session.release?.();
  const kernel = events.filter(isKernel).map((e) => e.dur);
  if (kernel.length !== warm + reps) {
    throw new Error(`${c.id}: ${kernel.length} ORT kernel events for ${warm + reps} runs`);
  }
  return {
    ours_ns: median(ours),
    ort_ns: median(kernel.slice(warm)) * 1000,
    stream_plain_ns: median(plain),
    stream_nt_ns: median(nt),
    matched_plain_ns: median(mplain),
    matched_nt_ns: median(mnt),
    samples: reps,
  };
}

async function runE2E(model, threads, args, profileDir) {
  const ours = oursModelMs(args.onnxBcast, model, threads, args.e2eRuns);
  const prefix = `e2e_${path.basename(model, '.onnx')}_t${threads}_`;
  const session = await ort.InferenceSession.create(model, sessionOptions(threads, profileDir, prefix));
  const feeds = sessionFeeds(session, patternInput);
  const warm = 3;
  const wall = [];
  for (let r = 0; r < warm + args.e2eRuns; ++r) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    if (r >= warm) wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const events = await endProfiling(session, profileDir, prefix);
  await session.release?.();
  const runs = events.filter(isModelRun).map((e) => e.dur / 1000).slice(warm);
  return { ours_ms: ours, ort_ms: median(runs), ort_wall_ms: median(wall) };
}

const fmtTime = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(3)} ms` : `${(ns / 1e3).toFixed(2)} us`);

async function main() {
  const args = parseArgs(process.argv, kFlags,
                         { threads: [1, 2], reps: 15, tinyBatch: 2000, e2e: [], e2eRuns: 30 });
  const cases = JSON.parse(fs.readFileSync(args.cases, 'utf8'))
      .filter((c) => !args.only || args.only.test(c.id));
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcast-peer-'));
  const driver = new Driver(args.driver);
  const results = [];
  console.log(`onnxruntime-node ${ort.env.versions?.common ?? ''}; threads ${args.threads.join(',')};` +
              ` ${args.reps} interleaved samples per large case (x4 for tiny), medians`);
  const header = ['case', 'thr', 'ours', 'ORT kernel', 'STREAM', 'STREAM nt', 'ours GB/s',
                  'limit GB/s', 'ORT/ours', 'ours/limit', 'mix', 'mix GB/s', 'ours/mix'];
  console.log(header.join('\t'));
  for (const c of cases) {
    const [kind] = await driver.ask(`prep ${c.op} ${c.dtype} ${c.a.join('x') || 's'} ${c.b.join('x') || 's'}`);
    const info = await driver.ask('info');
    const [bytes, streamBytes, matchedBytes] = info.slice(0, 3).map(Number);
    const mix = info[3];
    for (const threads of args.threads) {
      const r = await runKernelCase(driver, c, threads, args, profileDir);
      const oursGBs = bytes / r.ours_ns;
      const limitGBs = Math.max(streamBytes / r.stream_plain_ns, streamBytes / r.stream_nt_ns);
      const mixGBs = Math.max(matchedBytes / r.matched_plain_ns, matchedBytes / r.matched_nt_ns);
      const row = { ...c, kind, threads, bytes, stream_bytes: streamBytes, mix,
                    matched_bytes: matchedBytes, ...r, ours_gbs: oursGBs,
                    limit_gbs: c.large ? limitGBs : null, mix_gbs: c.large ? mixGBs : null,
                    speedup_vs_ort: r.ort_ns / r.ours_ns,
                    fraction_of_limit: c.large ? oursGBs / limitGBs : null,
                    fraction_of_mix: c.large ? oursGBs / mixGBs : null };
      results.push(row);
      console.log([c.id, threads, fmtTime(r.ours_ns), fmtTime(r.ort_ns),
                   c.large ? fmtTime(r.stream_plain_ns) : '-', c.large ? fmtTime(r.stream_nt_ns) : '-',
                   oursGBs.toFixed(1), c.large ? limitGBs.toFixed(1) : '-',
                   `${row.speedup_vs_ort.toFixed(2)}x`,
                   c.large ? row.fraction_of_limit.toFixed(2) : '-', c.large ? mix : '-',
                   c.large ? mixGBs.toFixed(1) : '-', c.large ? row.fraction_of_mix.toFixed(2) : '-'].join('\t'));
    }
  }
  driver.close();
  const e2e = [];
  if (args.e2e.length > 0) {
    console.log(['model', 'thr', 'ours run', 'ORT model_run', 'ORT wall', 'ours/ORT'].join('\t'));
    for (const model of args.e2e) {
      for (const threads of args.threads) {
        const r = await runE2E(model, threads, args, profileDir);
        const row = { model: path.basename(model), threads, ...r, ratio: r.ours_ms / r.ort_ms };
        e2e.push(row);
        console.log([row.model, threads, `${r.ours_ms.toFixed(3)} ms`, `${r.ort_ms.toFixed(3)} ms`,
                     `${r.ort_wall_ms.toFixed(3)} ms`, `${row.ratio.toFixed(2)}x`].join('\t'));
      }
    }
  }
  fs.rmSync(profileDir, { recursive: true, force: true });
  // The same figures as a Markdown table, for docs/performance-kernels.md.
  console.log('\n| case | thr | ours | ORT kernel | ours GB/s | STREAM add limit GB/s | ORT/ours | ours/limit | mix | mix limit GB/s | ours/mix limit |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const big = (x) => (r.large ? x : '-');
    console.log(`| ${r.id} | ${r.threads} | ${fmtTime(r.ours_ns)} | ${fmtTime(r.ort_ns)} | ` +
                `${r.ours_gbs.toFixed(1)} | ${big(r.limit_gbs?.toFixed(1))} | ${r.speedup_vs_ort.toFixed(2)}x | ` +
                `${big(r.fraction_of_limit?.toFixed(2))} | ${big(r.mix)} | ${big(r.mix_gbs?.toFixed(1))} | ` +
                `${big(r.fraction_of_mix?.toFixed(2))} |`);
  }
  if (e2e.length > 0) {
    console.log('\n| model | threads | ours run | ORT model_run | ORT wall | ours/ORT |');
    console.log('|---|---|---|---|---|---|');
    for (const r of e2e) {
      console.log(`| ${r.model} | ${r.threads} | ${r.ours_ms.toFixed(3)} ms | ${r.ort_ms.toFixed(3)} ms | ` +
                  `${r.ort_wall_ms.toFixed(3)} ms | ${r.ratio.toFixed(2)}x |`);
    }
  }
  if (args.json) {
    fs.writeFileSync(args.json, JSON.stringify({
      date: new Date().toISOString(), machine: `${os.cpus()[0]?.model} x${os.cpus().length}`,
      ort: ort.env.versions?.common ?? null, kernels: results, e2e }, null, 1));
  }
}

main().catch((e) => { console.error(`ort_kernel.mjs: ${e.message}`); process.exit(1); });
