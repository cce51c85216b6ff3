// The page: the book's puzzles, an editor, and the live verdict. Every
// check, score, explanation and diagram comes from the WebAssembly module
// (crates/web) in a Web Worker; this file only shows them and keeps the
// learner's files and progress in localStorage.

import { highlightLines } from "./highlight.js";
import { makeZip, readZip } from "./zip.js";

const STORE = "metal-puzzles/v1";
const DEBOUNCE_MS = 250;
// A check that takes longer is stopped (the simulator's own instruction
// budget stops runaway loops much sooner; this guards everything else).
const CHECK_LIMIT_MS = 20000;

const $ = (id) => document.getElementById(id);

// ---- the simulator in a worker -------------------------------------------

class Cancelled extends Error {}

class Simulator {
  constructor() {
    this.module = (async () => {
      const response = fetch("book.wasm");
      try {
        return await WebAssembly.compileStreaming(response);
      } catch {
        // (a server that does not send application/wasm)
        return WebAssembly.compile(await (await fetch("book.wasm")).arrayBuffer());
      }
    })();
    this.nextId = 1;
    this.pending = null; // {id, resolve, reject, timer}
    this.queue = [];
    this.start();
  }

  start() {
    this.live = false;
    this.worker = new Worker("worker.js");
    this.ready = this.module.then(
      (module) =>
        new Promise((resolve, reject) => {
          this.worker.onmessage = (e) => (e.data.type === "ready" ? resolve() : reject(new Error(e.data.message)));
          this.worker.postMessage({ type: "init", module });
        }),
    );
    const worker = this.worker;
    this.ready.then(() => {
      if (worker !== this.worker) return; // (replaced while starting)
      this.live = true;
      worker.onmessage = (e) => this.onAnswer(e.data);
      this.pump();
    }, () => {});
  }

  /** Answer `request`; rejects with Cancelled when cancelled. */
  run(request, limitMs = CHECK_LIMIT_MS) {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, request, resolve, reject, limitMs });
      this.ready.then(() => this.pump(), reject);
    });
  }

  pump() {
    if (!this.live || this.pending || !this.queue.length) return;
    const job = this.queue.shift();
    this.pending = job;
    job.started = performance.now();
    job.timer = setTimeout(() => this.restart(new Error(`stopped after ${job.limitMs / 1000} s: the check took too long`)), job.limitMs);
    this.worker.postMessage({ id: job.id, request: job.request });
  }

  onAnswer(msg) {
    const job = this.pending;
    if (!job || msg.id !== job.id) return;
    clearTimeout(job.timer);
    this.pending = null;
    if (msg.type === "crash") {
      job.reject(new Error(`the simulator stopped: ${msg.message}`));
      this.restart(null);
      return;
    }
    if (msg.answer.error) job.reject(new Error(msg.answer.error));
    else job.resolve({ value: msg.answer.ok, ms: msg.ms });
    this.pump();
  }

  /** Cancel everything queued or running. */
  cancelAll() {
    for (const job of this.queue) job.reject(new Cancelled());
    this.queue = [];
    if (this.pending) this.restart(new Cancelled());
  }

  /** Replace the worker (the running job is rejected with `why`). */
  restart(why) {
    const job = this.pending;
    this.pending = null;
    this.worker.terminate();
    if (job) {
      clearTimeout(job.timer);
      if (why) job.reject(why);
    }
    this.start();
  }
}

// ---- storage ---------------------------------------------------------------

function load() {
  try {
    const s = JSON.parse(localStorage.getItem(STORE) || "{}");
    return { current: s.current || 1, files: s.files || {}, status: s.status || {}, hints: s.hints || {} };
  } catch {
    return { current: 1, files: {}, status: {}, hints: {} };
  }
}

function save() {
  try {
    localStorage.setItem(STORE, JSON.stringify(state));
  } catch (e) {
    setStatus(`Your work could not be saved in this browser (${e.message}); use Export to keep it.`);
  }
}

// ---- state -------------------------------------------------------------------

const sim = new Simulator();
const state = load();
let book = null; // {chapters: [{title, puzzles: [...]}], count}
let list = []; // every puzzle of the book, in order
let info = null; // the open puzzle
let generation = 0;
let debounce = null;
const goals = new Map(); // puzzle number → goal SVG
let statusTimer = null;

function fileText(p) {
  return state.files[p.file_name] ?? null;
}

// A message (export, import, storage) stays for a few seconds, then the
// progress count comes back; progress changes meanwhile wait for it.
function setStatus(text) {
  $("progress").textContent = text;
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => {
    statusTimer = null;
    showProgress();
  }, 8000);
}

function showProgress() {
  if (statusTimer) return;
  const solved = list.filter((p) => state.status[p.number] === "solved").length;
  $("progress").textContent = `${solved} of ${list.length} solved`;
}

function optionLabel(p) {
  const mark = state.status[p.number] === "solved" ? "✓" : state.status[p.number] === "attempted" ? "•" : " ";
  return `${mark} ${p.number}. ${p.title}`;
}

function fillPicker() {
  const picker = $("picker");
  picker.textContent = "";
  for (const c of book.chapters) {
    const group = document.createElement("optgroup");
    group.label = c.title;
    for (const p of c.puzzles) {
      const o = document.createElement("option");
      o.value = p.number;
      o.textContent = optionLabel(p);
      group.append(o);
    }
    picker.append(group);
  }
}

function updatePickerMarks() {
  for (const o of $("picker").options) {
    const p = list.find((q) => q.number === Number(o.value));
    if (p) o.textContent = optionLabel(p);
  }
  showProgress();
}

// ---- the editor ----------------------------------------------------------------

const input = $("editor-input");
let marks = new Map(); // line → "err" | "warn"
let escapePressed = false;

function renderEditor() {
  const text = input.value;
  const lines = highlightLines(text);
  $("highlight").innerHTML =
    lines.map((l, i) => `<span class="ln${marks.has(i + 1) ? " " + marks.get(i + 1) : ""}">${l || " "}</span>`).join("\n") + "\n ";
  const gutter = $("gutter");
  gutter.innerHTML = lines
    .map((_, i) => {
      const m = marks.get(i + 1);
      return `<div${m ? ` class="${m}" title="${m === "err" ? "error" : "warning"} on this line"` : ""}>${m ? "●" : ""}${i + 1}</div>`;
    })
    .join("");
}

function goToLine(line, column = 1) {
  const lines = input.value.split("\n");
  let at = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length); i++) at += lines[i].length + 1;
  const lineLen = (lines[line - 1] ?? "").length;
  input.focus();
  input.setSelectionRange(at + Math.min(column - 1, lineLen), at + lineLen);
  const top = (line - 1) * 20;
  const editor = $("editor");
  if (top < editor.scrollTop || top > editor.scrollTop + editor.clientHeight - 40) editor.scrollTop = Math.max(0, top - 60);
}

input.addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    escapePressed = true;
    return;
  }
  if (e.key === "Tab" && !escapePressed && !e.ctrlKey && !e.altKey && !e.metaKey) {
    e.preventDefault();
    const { selectionStart: s, selectionEnd: end, value } = input;
    if (e.shiftKey) {
      const lineStart = value.lastIndexOf("\n", s - 1) + 1;
      const n = value.slice(lineStart, lineStart + 4).match(/^ */)[0].length;
      if (n) input.setRangeText("", lineStart, lineStart + n, "preserve");
    } else {
      input.setRangeText("    ", s, end, "end");
    }
    input.dispatchEvent(new Event("input"));
    return;
  }
  if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
    const { selectionStart: s, value } = input;
    const lineStart = value.lastIndexOf("\n", s - 1) + 1;
    const indent = value.slice(lineStart, s).match(/^[ \t]*/)[0];
    const extra = /\{\s*$/.test(value.slice(lineStart, s)) ? "    " : "";
    e.preventDefault();
    input.setRangeText("\n" + indent + extra, s, input.selectionEnd, "end");
    input.dispatchEvent(new Event("input"));
  }
  escapePressed = false;
});

input.addEventListener("input", () => {
  if (!info) return;
  state.files[info.file_name] = input.value;
  // Progress is about the current text: an edit makes a solved puzzle
  // "attempted" until its next verdict.
  if (state.status[info.number] !== "attempted" && input.value !== info.starter) {
    state.status[info.number] = "attempted";
    updatePickerMarks();
  }
  save();
  renderEditor();
  scheduleCheck();
});

// ---- the verdict -------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

function setHeadline(text, cls) {
  const h = $("headline");
  if (h.textContent !== text) h.textContent = text;
  h.className = `headline ${cls}`;
}

function scoreTable(t) {
  const head = el("tr", {}, el("th", { scope: "col" }, ""), ...t.cells.map((c) => el("th", { scope: "col" }, c.heading)));
  const yours = el("tr", {}, el("th", { scope: "row" }, "Yours"), ...t.cells.map((c) => el("td", {}, String(c.value))));
  const target = el(
    "tr",
    {},
    el("th", { scope: "row" }, "Target"),
    ...t.cells.map((c) => {
      if (c.target === null) return el("td", {}, "-");
      const mark = c.met === true ? " ✓" : c.met === false ? " ✗" : "";
      const label = c.met === true ? "met" : c.met === false ? "over the target" : "judged once the tests pass";
      return el("td", { class: c.met === true ? "met" : c.met === false ? "over" : "", title: label }, `≤ ${c.target}${mark}`);
    }),
  );
  return el("table", { class: "score" }, el("caption", {}, `${t.title}: score (max per thread)`), el("thead", {}, head), el("tbody", {}, yours, target));
}

function renderVerdict(v, ms) {
  marks = new Map();
  for (const m of v.marks) {
    if (!m.at) continue;
    const kind = m.severity === "error" ? "err" : "warn";
    if (marks.get(m.at[0]) !== "err") marks.set(m.at[0], kind);
  }
  renderEditor();
  const first = v.headline[0] || "";
  let summary = first;
  if (v.solved) summary = `Solved! ${v.targets_verdict.trim()}`;
  else if (v.passed) summary = `Tests pass, not solved yet: a target is missed.`;
  else if (v.headline.length > 1) summary = `${first} ${v.headline[1]}`;
  setHeadline(summary, v.solved ? "ok" : "bad");
  const d = $("details");
  d.textContent = "";
  const errs = v.marks;
  if (errs.length) {
    const ul = el("ul", { "aria-label": "Findings and errors" });
    for (const m of errs) {
      const where = m.at
        ? el("button", { type: "button", onclick: () => goToLine(m.at[0], m.at[1]), "aria-label": `Go to line ${m.at[0]}` }, `line ${m.at[0]}`)
        : null;
      ul.append(
        el(
          "li",
          { class: "finding", "data-line": m.at ? m.at[0] : "" },
          where,
          " ",
          el("span", { class: m.severity === "error" ? "err" : "warn" }, `${m.severity}${m.kind ? ` [${m.kind}]` : ""}`),
          `: ${m.message}`,
          el("details", {}, el("summary", {}, "Details"), el("pre", { class: "code" }, m.text)),
        ),
      );
    }
    d.append(ul);
  }
  const failing = v.check.tests.find((t) => !t.passed);
  if (failing && failing.yours !== undefined) {
    d.append(el("p", {}, `Failing test: ${failing.name}`));
  }
  if (v.explanations.length) {
    d.append(el("h3", {}, "Why"), el("ul", { class: "why" }, ...v.explanations.map((x) => el("li", {}, x))));
  }
  if (v.targets_verdict && !v.solved) d.append(el("pre", { class: "code" }, v.targets_verdict));
  for (const t of v.tables) d.append(scoreTable(t));
  d.append(
    el("details", {}, el("summary", {}, "Full report (as the command line prints it)"), el("pre", { class: "code" }, v.report)),
    el("p", { class: "help" }, `Checked in ${Math.round(ms)} ms.`),
  );
  if (v.signatures.length) showSignatures(v.signatures);
  const status = v.solved ? "solved" : "attempted";
  if (v.solved || input.value !== info.starter) state.status[info.number] = status;
  else delete state.status[info.number];
  save();
  updatePickerMarks();
  $("state").textContent = v.solved ? "✓ solved" : "";
}

let diagramUrls = {};
function showSvg(where, svg, alt) {
  const box = $(where);
  if (diagramUrls[where]) URL.revokeObjectURL(diagramUrls[where]);
  box.textContent = "";
  if (!svg) return;
  const url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  diagramUrls[where] = url;
  box.append(el("a", { href: url, target: "_blank", rel: "noopener" }, el("img", { src: url, alt })));
}

function scheduleCheck() {
  clearTimeout(debounce);
  debounce = setTimeout(refresh, DEBOUNCE_MS);
}

async function refresh() {
  const gen = ++generation;
  sim.cancelAll();
  const p = info;
  const source = input.value;
  // "Checking…" only for checks that take a while: quick ones would make
  // the headline (a live region) flicker and chatter on every keystroke.
  const busy = setTimeout(() => gen === generation && setHeadline("Checking…", "busy"), 400);
  try {
    const { value, ms } = await sim.run({ op: "check", puzzle: p.number, source });
    clearTimeout(busy);
    if (gen !== generation) return;
    renderVerdict(value, ms);
    const d = await sim.run({ op: "diagram", puzzle: p.number, source, test: 0 });
    if (gen !== generation) return;
    if (d.value.svg) showSvg("mine", d.value.svg, `Diagram of your kernel on the first test: ${d.value.title}`);
    else {
      showSvg("mine", null);
      $("mine").append(el("p", {}, "No diagram: the kernel does not compile."));
    }
    if (!goals.has(p.number)) {
      const g = await sim.run({ op: "goal", puzzle: p.number, test: 0 });
      goals.set(p.number, g.value.svg);
      if (gen === generation) showGoal(p);
    }
  } catch (e) {
    clearTimeout(busy);
    if (e instanceof Cancelled || gen !== generation) return;
    setHeadline(`Could not check: ${e.message}`, "bad");
    $("details").textContent = "";
  }
}

function showGoal(p) {
  if (goals.has(p.number)) showSvg("goal", goals.get(p.number), `Goal for puzzle ${p.number}: the inputs, the expected output, and which input cells each output cell needs`);
  else $("goal").textContent = "Drawing the goal…";
}

// ---- a puzzle --------------------------------------------------------------

function showSignatures(list) {
  const names = info.stages.length ? info.stages.map((s) => `${s.marker}\n`) : [""];
  $("signature").textContent = list.length
    ? list.map((sig, k) => (names[k] || "") + sig).join("\n")
    : "(shown once the file's kernel sections are in place)";
}

function renderHints() {
  const shown = state.hints[info.number] || 0;
  const ol = $("hints");
  ol.textContent = "";
  info.hints.slice(0, shown).forEach((h) => ol.append(el("li", {}, h)));
  const b = $("hint");
  if (!info.hints.length) {
    b.textContent = "This puzzle has no hints";
    b.disabled = true;
  } else if (shown >= info.hints.length) {
    b.textContent = "All hints shown";
    b.disabled = true;
  } else {
    b.textContent = `Show hint ${shown + 1} of ${info.hints.length}`;
    b.disabled = false;
  }
}

$("hint").addEventListener("click", () => {
  state.hints[info.number] = Math.min((state.hints[info.number] || 0) + 1, info.hints.length);
  save();
  renderHints();
  $("hints").lastElementChild?.setAttribute("tabindex", "-1");
  $("hints").lastElementChild?.focus();
});

async function open(number) {
  const p = list.find((q) => q.number === number) || list[0];
  state.current = p.number;
  save();
  if (location.hash !== `#${p.number}`) history.replaceState(null, "", `#${p.number}`);
  $("picker").value = String(p.number);
  generation++;
  sim.cancelAll();
  const { value } = await sim.run({ op: "puzzle", puzzle: p.number });
  info = value;
  document.title = `${info.number}. ${info.title} — Metal Puzzles`;
  $("chapter").textContent = `${info.chapter} · puzzle ${info.number} of ${list.length}`;
  $("title").textContent = `Puzzle ${info.number}: ${info.title}`;
  $("explanation").textContent = "";
  for (const para of info.explanation.split(/\n\s*\n/)) $("explanation").append(el("p", {}, para));
  if (info.stages.length) {
    $("explanation").append(
      el("p", {}, `This puzzle is a pipeline of ${info.stages.length} kernels; write each under its own marker line in the file:`),
      el("ol", {}, ...info.stages.map((s) => el("li", {}, el("code", {}, s.marker), ` — ${s.about}`))),
    );
  }
  showSignatures(info.signatures);
  const targets = info.targets.filter((t) => t.target !== null);
  $("targets").textContent = "";
  if (targets.length) {
    $("targets").append(
      el("h3", {}, "Targets (max per thread)"),
      el("ul", {}, ...targets.map((t) => el("li", {}, `${t.heading} ≤ ${t.target}`))),
      el("details", {}, el("summary", {}, "How memory is counted"), el("p", {}, info.counting_rule)),
    );
  }
  renderHints();
  $("file-name").textContent = info.file_name;
  $("state").textContent = state.status[info.number] === "solved" ? "✓ solved" : "";
  input.value = fileText(info) ?? info.starter;
  marks = new Map();
  renderEditor();
  $("editor").scrollTop = 0;
  showSvg("mine", null);
  showGoal(info);
  refresh();
}

$("picker").addEventListener("change", () => open(Number($("picker").value)));
$("prev").addEventListener("click", () => open(Math.max(1, state.current - 1)));
$("next").addEventListener("click", () => open(Math.min(list.length, state.current + 1)));
window.addEventListener("hashchange", () => {
  const n = Number(location.hash.slice(1));
  if (n && n !== state.current) open(n);
});

$("reset").addEventListener("click", () => {
  if (!info) return;
  if (!confirm(`Reset ${info.file_name} to the starter file? Your code for this puzzle is replaced (export first to keep it).`)) return;
  delete state.files[info.file_name];
  delete state.status[info.number];
  save();
  updatePickerMarks();
  open(info.number);
});

// ---- export and import -----------------------------------------------------------

$("export").addEventListener("click", async () => {
  const files = [];
  for (const p of list) {
    const text = state.files[p.file_name];
    if (text !== undefined) files.push({ name: p.file_name, text });
  }
  if (!files.length) {
    setStatus("Nothing to export yet: no puzzle has been edited.");
    return;
  }
  const blob = new Blob([makeZip(files)], { type: "application/zip" });
  const a = el("a", { href: URL.createObjectURL(blob), download: "metal-puzzles.zip" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  setStatus(`Exported ${files.length} file${files.length === 1 ? "" : "s"} as metal-puzzles.zip (unzip into your metal-puzzles folder).`);
});

$("import").addEventListener("change", async (e) => {
  const taken = [];
  const ignored = [];
  for (const f of e.target.files) {
    try {
      const entries = f.name.toLowerCase().endsWith(".zip") ? await readZip(await f.arrayBuffer()) : [{ name: f.name, text: await f.text() }];
      for (const entry of entries) {
        const base = entry.name.split("/").pop();
        const p = list.find((q) => q.file_name === base);
        if (!p) {
          if (!base.startsWith(".")) ignored.push(base);
          continue;
        }
        state.files[p.file_name] = entry.text;
        state.status[p.number] = "attempted";
        taken.push(p.file_name);
      }
    } catch (err) {
      ignored.push(`${f.name} (${err.message})`);
    }
  }
  e.target.value = "";
  save();
  updatePickerMarks();
  setStatus(
    `Imported ${taken.length} file${taken.length === 1 ? "" : "s"}` +
      (ignored.length ? `; not puzzle files, left out: ${ignored.join(", ")}` : "") +
      ". Each is checked when you open its puzzle.",
  );
  if (taken.includes(info?.file_name)) open(info.number);
});

// ---- start -------------------------------------------------------------------

async function main() {
  try {
    const { value } = await sim.run({ op: "book" });
    book = value;
    list = book.chapters.flatMap((c) => c.puzzles);
    fillPicker();
    showProgress();
    const fromHash = Number(location.hash.slice(1));
    await open(fromHash || state.current || 1);
  } catch (e) {
    setHeadline(`The simulator could not start: ${e.message}`, "bad");
  }
}

main();

if ("serviceWorker" in navigator && location.protocol !== "file:") {
  navigator.serviceWorker.register("sw.js").catch(() => {});
}
