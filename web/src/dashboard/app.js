// weir's dashboard: reads Flink's REST API of this process and redraws every second.
"use strict";

const REFRESH_MS = 1000;
const BOX = { width: 250, height: 96, gapX: 90, gapY: 30 };
// `#job=<jid>&vertex=<vid>` in the address opens a job and a vertex's subtasks.
const linked = new URLSearchParams(location.hash.slice(1));
let selected = linked.get("job");
let selectedVertex = linked.get("vertex");

async function getJson(path) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

function text(tag, content, className) {
  const element = document.createElement(tag);
  element.textContent = content;
  if (className) element.className = className;
  return element;
}

function row(cells) {
  const tr = document.createElement("tr");
  cells.forEach((cell) => tr.appendChild(cell instanceof Node ? cell : text("td", String(cell))));
  return tr;
}

function formatCount(n) {
  return Number(n).toLocaleString("en-US", { maximumFractionDigits: 1 });
}

function formatDuration(ms) {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}m ${s % 60}s`;
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1 << 20)).toFixed(1)} MB`;
}

function formatWatermark(value, short) {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= -9.2e18) return "No Watermark";
  const text = new Date(n).toISOString().replace("T", " ").replace("Z", "");
  return short ? text.slice(11) : text;
}

// Idle is blue, fully busy red, fully back-pressured black; shades in between, as in Flink's UI.
function vertexColour(busy, backpressured) {
  const b = Math.min(1, busy / 1000);
  const p = Math.min(1 - b, backpressured / 1000);
  const i = Math.max(0, 1 - b - p);
  const mix = (idle, hot, dark) => Math.round(i * idle + b * hot + p * dark);
  return `rgb(${mix(64, 210, 20)}, ${mix(120, 40, 20)}, ${mix(220, 40, 20)})`;
}

async function refreshJobs() {
  const { jobs } = await getJson("/jobs/overview");
  const body = document.querySelector("#jobs tbody");
  body.replaceChildren();
  jobs.sort((a, b) => b["start-time"] - a["start-time"]);
  for (const job of jobs) {
    const tr = row([
      job.name,
      job.jid,
      text("td", job.state, `state-${job.state}`),
      new Date(job["start-time"]).toLocaleTimeString(),
      formatDuration(job.duration),
      `${job.tasks.running} running / ${job.tasks.total}`,
    ]);
    tr.dataset.jid = job.jid;
    if (job.jid === selected) tr.classList.add("selected");
    tr.addEventListener("click", () => { selected = job.jid; selectedVertex = null; refresh(); });
    body.appendChild(tr);
  }
  if (!selected && jobs.length > 0) {
    selected = (jobs.find((j) => j.state === "RUNNING") || jobs[0]).jid;
  }
}

// The metrics of every subtask of a vertex, by name: { numRecordsIn: [subtask values], ... }.
async function vertexMetrics(jid, vid) {
  const base = `/jobs/${jid}/vertices/${vid}/metrics`;
  const ids = (await getJson(base)).map((m) => m.id);
  const values = ids.length ? await getJson(`${base}?get=${ids.map(encodeURIComponent).join(",")}`) : [];
  const byName = {};
  for (const { id, value } of values) {
    const name = id.slice(id.lastIndexOf(".") + 1);
    (byName[name] = byName[name] || []).push(Number(value));
  }
  return byName;
}

const sum = (xs) => (xs || []).reduce((a, b) => a + b, 0);
const max = (xs) => (xs && xs.length ? Math.max(...xs) : 0);
const min = (xs) => (xs && xs.length ? Math.min(...xs) : -Infinity);

// Columns by longest path from the sources; rows in order within a column.
function layout(nodes) {
  const level = {};
  const visit = (node) => {
    if (level[node.id] !== undefined) return level[node.id];
    level[node.id] = 0;
    const inputs = node.inputs || [];
    level[node.id] = inputs.length ? 1 + Math.max(...inputs.map((i) => visit(nodes.find((n) => n.id === i.id)))) : 0;
    return level[node.id];
  };
  nodes.forEach(visit);
  const rows = {};
  const position = {};
  for (const node of [...nodes].reverse()) {
    const column = level[node.id];
    rows[column] = (rows[column] || 0) + 1;
    position[node.id] = {
      x: 20 + column * (BOX.width + BOX.gapX),
      y: 20 + (rows[column] - 1) * (BOX.height + BOX.gapY),
    };
  }
  return position;
}

function svg(tag, attributes, content) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  Object.entries(attributes).forEach(([k, v]) => element.setAttribute(k, v));
  if (content !== undefined) element.textContent = content;
  return element;
}

function drawGraph(job, metrics) {
  const graph = document.getElementById("graph");
  graph.replaceChildren();
  const defs = svg("defs", {});
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto" });
  marker.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#57606a" }));
  defs.appendChild(marker);
  graph.appendChild(defs);
  const nodes = job.plan.nodes;
  const position = layout(nodes);
  let width = 0;
  let height = 0;
  for (const node of nodes) {
    for (const input of node.inputs || []) {
      const from = position[input.id];
      const to = position[node.id];
      const x1 = from.x + BOX.width, y1 = from.y + BOX.height / 2, x2 = to.x, y2 = to.y + BOX.height / 2;
      const edge = svg("g", { class: "edge" });
      edge.appendChild(svg("path", { d: `M${x1},${y1} C${x1 + 40},${y1} ${x2 - 40},${y2} ${x2},${y2}` }));
      edge.appendChild(svg("text", { x: (x1 + x2) / 2 - 24, y: (y1 + y2) / 2 - 6 }, input.ship_strategy));
      graph.appendChild(edge);
    }
  }
  for (const vertex of job.vertices) {
    const at = position[vertex.id];
    const m = metrics[vertex.id] || {};
    const busy = max(m.busyTimeMsPerSecond);
    const backpressured = max(m.backPressuredTimeMsPerSecond);
    const watermark = min(m.currentInputWatermark);
    const group = svg("g", { class: "vertex", "data-vertex": vertex.id, transform: `translate(${at.x},${at.y})` });
    group.appendChild(svg("rect", { width: BOX.width, height: BOX.height, fill: vertexColour(busy, backpressured) }));
    const name = vertex.name.length > 34 ? `${vertex.name.slice(0, 33)}…` : vertex.name;
    const lines = [
      name,
      `Parallelism: ${vertex.parallelism}`,
      `Backpressured (max): ${Math.round(backpressured / 10)}%`,
      `Busy (max): ${Math.round(busy / 10)}%`,
      `Low Watermark: ${formatWatermark(watermark, true)}`,
    ];
    lines.forEach((line, i) => group.appendChild(svg("text", { x: 8, y: 17 + i * 17 }, line)));
    group.appendChild(svg("title", {}, vertex.name));
    group.addEventListener("click", () => { selectedVertex = vertex.id; drawSubtasks(job, metrics); });
    graph.appendChild(group);
    width = Math.max(width, at.x + BOX.width + 20);
    height = Math.max(height, at.y + BOX.height + 20);
  }
  graph.setAttribute("viewBox", `0 0 ${width} ${height}`);
  graph.setAttribute("height", height);
  graph.dataset.ready = "true";
}

function drawVertices(job, metrics) {
  const body = document.querySelector("#vertices tbody");
  body.replaceChildren();
  for (const vertex of job.vertices) {
    const m = metrics[vertex.id] || {};
    const tr = row([
      vertex.name,
      vertex.parallelism,
      formatCount(sum(m.numRecordsIn)),
      formatCount(sum(m.numRecordsInPerSecond)),
      formatCount(sum(m.numRecordsOut)),
      formatCount(sum(m.numRecordsOutPerSecond)),
      `${Math.round(max(m.busyTimeMsPerSecond) / 10)}%`,
      `${Math.round(max(m.backPressuredTimeMsPerSecond) / 10)}%`,
      formatWatermark(min(m.currentInputWatermark)),
      formatCount(sum(m.numLateRecordsDropped)),
    ]);
    tr.dataset.vertex = vertex.id;
    tr.addEventListener("click", () => { selectedVertex = vertex.id; drawSubtasks(job, metrics); });
    body.appendChild(tr);
  }
}

// The chosen vertex's subtasks, one row each (metric arrays are in subtask order).
function drawSubtasks(job, metrics) {
  const section = document.getElementById("subtasks-section");
  const vertex = job.vertices.find((v) => v.id === selectedVertex);
  if (!vertex) { section.hidden = true; return; }
  section.hidden = false;
  document.getElementById("subtasks-title").textContent = `Subtasks of ${vertex.name}`;
  const m = metrics[vertex.id] || {};
  const at = (name, i) => (m[name] || [])[i] || 0;
  const body = document.querySelector("#subtasks tbody");
  body.replaceChildren();
  for (let i = 0; i < vertex.parallelism; i++) {
    body.appendChild(row([
      i,
      formatCount(at("numRecordsIn", i)),
      formatCount(at("numRecordsInPerSecond", i)),
      formatCount(at("numRecordsOut", i)),
      formatCount(at("numRecordsOutPerSecond", i)),
      `${Math.round(at("busyTimeMsPerSecond", i) / 10)}%`,
      `${Math.round(at("backPressuredTimeMsPerSecond", i) / 10)}%`,
      `${Math.round(at("idleTimeMsPerSecond", i) / 10)}%`,
      formatWatermark((m.currentInputWatermark || [])[i]),
    ]));
  }
}

async function drawCheckpoints(jid) {
  const stats = await getJson(`/jobs/${jid}/checkpoints`);
  const c = stats.counts;
  document.getElementById("checkpoint-counts").textContent =
    `Triggered ${c.total}, in progress ${c.in_progress}, completed ${c.completed}, failed ${c.failed}, restored ${c.restored}`;
  const body = document.querySelector("#checkpoints tbody");
  body.replaceChildren();
  for (const cp of stats.history) {
    body.appendChild(row([
      cp.id,
      text("td", cp.status, cp.status === "FAILED" ? "state-FAILED" : "state-FINISHED"),
      new Date(cp.trigger_timestamp).toLocaleTimeString(),
      formatDuration(cp.end_to_end_duration),
      formatBytes(cp.state_size),
      formatBytes(cp.checkpointed_size),
      `${cp.num_acknowledged_subtasks}/${cp.num_subtasks}`,
    ]));
  }
}

async function drawExceptions(jid) {
  const { exceptionHistory } = await getJson(`/jobs/${jid}/exceptions`);
  const entries = exceptionHistory.entries;
  document.getElementById("exceptions").textContent = entries.length
    ? entries.map((e) => `${new Date(e.timestamp).toISOString()}  ${e.stacktrace}`).join("\n\n")
    : "No exceptions.";
}

async function refreshJob() {
  const section = document.getElementById("job");
  if (!selected) { section.hidden = true; return; }
  const job = await getJson(`/jobs/${selected}`);
  section.hidden = false;
  document.getElementById("job-title").textContent = job.name;
  const state = document.getElementById("job-state");
  state.textContent = job.state;
  state.className = `state-${job.state}`;
  document.getElementById("cancel").disabled = job.state !== "RUNNING";
  const metrics = {};
  await Promise.all(job.vertices.map(async (v) => { metrics[v.id] = await vertexMetrics(job.jid, v.id); }));
  drawGraph(job, metrics);
  drawVertices(job, metrics);
  drawSubtasks(job, metrics);
  await Promise.all([drawCheckpoints(job.jid).catch(() => {}), drawExceptions(job.jid)]);
}

async function refresh() {
  try {
    await refreshJobs();
    await refreshJob();
    document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    document.getElementById("updated").textContent = `cannot reach weir: ${error.message}`;
  }
}

document.getElementById("cancel").addEventListener("click", async () => {
  if (selected) await fetch(`/jobs/${selected}?mode=cancel`, { method: "PATCH" });
  refresh();
});

getJson("/config").then((c) => { document.getElementById("version").textContent = c["flink-version"]; }).catch(() => {});
refresh();
setInterval(refresh, REFRESH_MS);
