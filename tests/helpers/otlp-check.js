// SPDX-License-Identifier: ISC
// node otlp-check.js FILE [PARENT]: reads every line of FILE (retry --trace)
// with OpenTelemetry's own definitions of OTLP, opentelemetry-proto's
// TracesData as protobufjs compiles it for the OpenTelemetry JavaScript
// SDK (@opentelemetry/otlp-transformer, which tests/run-bats installs into
// .deps/), after OTLP/JSON's rules: IDs in hex, enums as numbers, 64-bit
// integers as strings.  A line must decode, encode and decode again to
// itself (so no member is unknown or of the wrong type), and its spans
// must hold together: IDs of the right length and not zero, every parent
// in FILE or PARENT (the inherited span), times in ns since the epoch
// with start <= end, attempts inside their run, the attributes retry(1)
// promises.  Prints a line per span: "LINE TRACE SPAN PARENT NAME FACTS"
// (the run's: its outcome and status code; an attempt's: exit and error),
// and exits 1 with the first fault, naming the line.
'use strict';
const fs = require('fs');

const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');
const TracesData = root.opentelemetry.proto.trace.v1.TracesData;
const ID_KEYS = ['traceId', 'spanId', 'parentSpanId'];

function fail(line, why) {
  process.stderr.write(`otlp-check: line ${line}: ${why}\n`);
  process.exit(1);
}

// A copy of v with the IDs turned by conv (hex to bytes, or back).
function mapIds(v, conv) {
  if (Array.isArray(v)) return v.map((x) => mapIds(x, conv));
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return v;
  const out = {};
  for (const [k, x] of Object.entries(v))
    out[k] = ID_KEYS.includes(k) ? conv(x) : mapIds(x, conv);
  return out;
}

// Whether a and b are the same JSON value, and where they first differ.
function differs(a, b, at) {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b))
    return `${at}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`;
  if (a === null || typeof a !== 'object')
    return a === b ? null : `${at}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (!(k in b)) return `${at}.${k}: not in OTLP's TracesData (unknown or of the wrong type)`;
    if (!(k in a)) return `${at}.${k}: added by the decoder`;
    const d = differs(a[k], b[k], `${at}.${k}`);
    if (d) return d;
  }
  return null;
}

// The line decoded by the real definitions, or a fault.
function decode(text, n) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    fail(n, `not JSON: ${e.message}`);
  }
  const obj = mapIds(json, (hex) => {
    if (typeof hex !== 'string' || !/^([0-9a-f]{2})+$/.test(hex))
      fail(n, `an ID that is not lower-case hex: ${JSON.stringify(hex)}`);
    return Buffer.from(hex, 'hex');
  });
  // fromObject() takes 64-bit integers as strings, as OTLP/JSON writes
  // them (verify() would not); what it cannot read comes back changed.
  let bytes;
  try {
    bytes = TracesData.encode(TracesData.fromObject(obj)).finish();
  } catch (e) {
    fail(n, `TracesData.fromObject: ${e.message}`);
  }
  const back = TracesData.toObject(TracesData.decode(bytes),
    { longs: String, enums: Number, bytes: String });
  const again = mapIds(back, (b64) => Buffer.from(b64, 'base64').toString('hex'));
  const d = differs(json, again, 'TracesData');
  if (d) fail(n, d);
  return TracesData.decode(bytes);
}

const attrs = (span) => Object.fromEntries(span.attributes.map((a) => {
  const v = a.value;
  return [a.key, v.stringValue ?? (v.intValue != null ? String(v.intValue) :
    v.doubleValue ?? v.boolValue)];
}));
const hex = (b) => Buffer.from(b).toString('hex');
const ns = (t) => BigInt(t.toString());

const [file, inherited] = process.argv.slice(2);
const lines = fs.readFileSync(file, 'utf8').split('\n');
if (lines.pop() !== '') fail(lines.length, 'the last line has no newline');
const now = BigInt(Date.now()) * 1000000n, day = 86400n * 1000000000n;
const all = [];
lines.forEach((text, i) => {
  const n = i + 1;
  const data = decode(text, n);
  if (data.resourceSpans.length !== 1) fail(n, 'not one resourceSpans');
  const res = attrs(data.resourceSpans[0].resource);
  for (const k of ['service.name', 'host.name', 'process.pid',
    'process.executable.name'])
    if (res[k] === undefined) fail(n, `resource without ${k}`);
  const spans = data.resourceSpans[0].scopeSpans[0].spans;
  const run = spans[0];
  for (const s of spans) {
    const name = s.name, id = hex(s.spanId), a = attrs(s);
    if (hex(s.traceId).length !== 32 || /^0+$/.test(hex(s.traceId)))
      fail(n, `${name}: traceId ${hex(s.traceId)}`);
    if (id.length !== 16 || /^0+$/.test(id)) fail(n, `${name}: spanId ${id}`);
    if (hex(s.traceId) !== hex(run.traceId)) fail(n, `${name}: another trace`);
    const start = ns(s.startTimeUnixNano), end = ns(s.endTimeUnixNano);
    if (start > end) fail(n, `${name}: starts after it ends`);
    if (start < now - day || end > now + 60n * 1000000000n)
      fail(n, `${name}: times not ns since the epoch of today`);
    if (s !== run) {
      if (hex(s.parentSpanId) !== hex(run.spanId)) fail(n, `${name}: not the run's child`);
      if (start < ns(run.startTimeUnixNano) || end > ns(run.endTimeUnixNano))
        fail(n, `${name}: outside its run`);
      if (name !== `attempt ${a['retry.attempt']}`) fail(n, `${name}: retry.attempt ${a['retry.attempt']}`);
      const failed = s.status != null && s.status.code === 2;
      if (failed !== (a['error.type'] !== undefined)) fail(n, `${name}: status and error.type disagree`);
    } else if (Number(a['retry.attempts']) !== spans.length - 1 +
        Number(a['retry.attempt_spans_dropped'] ?? 0)) {
      fail(n, `run: retry.attempts ${a['retry.attempts']} for ${spans.length - 1} attempt spans`);
    }
    const facts = s === run ? `outcome=${a['retry.outcome']} status=${s.status && s.status.code ? s.status.code : 'unset'}` :
      `exit=${a['process.exit.code'] ?? '-'} error=${a['error.type'] ?? '-'}`;
    all.push({ n, trace: hex(s.traceId), id, parent: s.parentSpanId && s.parentSpanId.length ? hex(s.parentSpanId) : '-', name, facts });
  }
});
const ids = new Set(all.map((s) => s.id));
for (const s of all) {
  if (s.parent !== '-' && !ids.has(s.parent) && s.parent !== inherited)
    fail(s.n, `${s.name}: parent ${s.parent} is neither in the file nor inherited`);
  process.stdout.write(`${s.n} ${s.trace} ${s.id} ${s.parent} ${s.name} ${s.facts}\n`);
}
