// Tests of the built site in a real browser (Chromium driven by
// playwright-core) and of its WebAssembly module under node.
//
// Run by tools/test.py after `python3 tools/playground.py build SITE`:
//   PLAYGROUND_SITE=SITE PLAYGROUND_REFERENCE=reference.json \
//   METAL_PUZZLES_BIN=target/debug/metal-puzzles PLAYGROUND_ARTIFACTS=DIR \
//   node --test tools/playground/test_site.mjs
// CHROMIUM overrides the browser (default /usr/bin/chromium).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { chromium } from "playwright-core";

const SITE = need("PLAYGROUND_SITE");
const ARTIFACTS = need("PLAYGROUND_ARTIFACTS");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`set ${name} (see the comment at the top of this file)`);
  return v;
}

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm" };
let server;
let base;

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
    const root = path.resolve(SITE);
    const file = path.join(root, rel);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}/`;
});

after(() => server?.close());

async function browser(viewport) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mp-chromium-"));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  return { ctx, close: async () => { await ctx.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

const headline = (page) => page.locator("#headline");

async function waitHeadline(page, re, timeout = 30000) {
  await page.waitForFunction((src) => new RegExp(src).test(document.getElementById("headline").textContent), re.source, { timeout });
}

const SOLVE_1 = "uint i = thread_position_in_grid.x;\nout[i] = a[i] + 10;\n";
const OOB_2 = "uint i = thread_position_in_grid.x;\nout[i] = a[i] + b[i + 1];\n";
const LOOP_1 = "uint i = thread_position_in_grid.x;\nwhile (true) {\n    out[i] = a[i];\n}\n";

for (const [name, viewport] of [["desktop", { width: 1280, height: 860 }], ["phone", { width: 390, height: 844 }]]) {
  test(`the book in a browser (${name})`, async (t) => {
    const { ctx, close } = await browser(viewport);
    // Each step builds on the last: after a failure the rest are skipped.
    let failed = false;
    const step = (what, fn) =>
      t.test(what, { skip: failed && "an earlier step failed" }, async () => {
        try {
          await fn();
        } catch (e) {
          failed = true;
          throw e;
        }
      });
    const shot = (page, what) => page.screenshot({ path: path.join(ARTIFACTS, `${name}-${what}.png`), fullPage: what !== "first" });
    try {
      const page = await ctx.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      const opened = Date.now();
      await page.goto(base + "index.html");

      await step("opens at the first puzzle, with a first verdict", async () => {
        await page.locator("#title", { hasText: "Puzzle 1: Map" }).waitFor();
        await waitHeadline(page, /Failed|Passed|Solved/);
        console.log(`# ${name}: first verdict ${Date.now() - opened} ms after opening the page`);
        assert.match(await page.locator("#signature").textContent(), /\[\[kernel\]\]/);
        assert.equal(await page.locator("#file-name").textContent(), "01_map.metal");
        await page.locator("#goal img").waitFor();
        await shot(page, "first");
      });

      await step("solves puzzle 1, with a diagram", async () => {
        await page.fill("#editor-input", SOLVE_1);
        await waitHeadline(page, /^Solved!/);
        await page.locator("#details table.score").first().waitFor();
        assert.match(await page.locator("#details table.score").first().textContent(), /≤ 1 ✓/);
        const img = page.locator("#mine img");
        await img.waitFor();
        await page.waitForFunction(() => document.querySelector("#mine img")?.naturalWidth > 0);
        assert.match(await img.getAttribute("alt"), /Puzzle 1/);
        assert.match(await page.locator("#progress").textContent(), /^1 of 29 solved/);
        await shot(page, "solved");
      });

      await step("an out-of-bounds read in puzzle 2 is marked at its line", async () => {
        await page.selectOption("#picker", "2");
        await page.locator("#title", { hasText: "Puzzle 2" }).waitFor();
        await page.fill("#editor-input", OOB_2);
        await waitHeadline(page, /Failed/);
        const finding = page.locator("#details li.finding", { hasText: "out-of-bounds" });
        await finding.waitFor();
        assert.equal(await finding.getAttribute("data-line"), "2");
        assert.equal(await page.locator("#gutter div").nth(1).getAttribute("class"), "err");
        assert.match(await page.locator("#highlight .ln").nth(1).getAttribute("class"), /err/);
        await finding.locator("button").click();
        const sel = await page.evaluate(() => document.getElementById("editor-input").selectionStart);
        assert.equal(sel, OOB_2.indexOf("b[i + 1]"), "the selection starts at the read");
        await shot(page, "out-of-bounds");
      });

      await step("a never-ending loop is reported in under 2 s, the page stays responsive", async () => {
        await page.selectOption("#picker", "1");
        await page.locator("#title", { hasText: "Puzzle 1" }).waitFor();
        await waitHeadline(page, /^Solved!/);
        const start = Date.now();
        await page.fill("#editor-input", LOOP_1);
        let slowest = 0;
        for (;;) {
          const t0 = Date.now();
          const text = await headline(page).textContent();
          slowest = Math.max(slowest, Date.now() - t0);
          if (/runaway/.test(text)) break;
          assert.ok(Date.now() - start < 2000, `no runaway verdict after ${Date.now() - start} ms (headline: ${text})`);
          await page.waitForTimeout(20);
        }
        const took = Date.now() - start;
        console.log(`# ${name}: runaway loop reported ${took} ms after the edit; slowest page round trip ${slowest} ms`);
        assert.ok(took < 2000);
        assert.ok(slowest < 250, `the page took ${slowest} ms to answer while the check ran`);
        // Typing still works, and a new edit replaces the verdict.
        await page.locator("#editor-input").focus();
        await page.keyboard.press("Control+End");
        await page.keyboard.type("// still typing\n");
        assert.match(await page.inputValue("#editor-input"), /still typing/);
        assert.match(await page.locator("#picker option[value='1']").textContent(), /^•/, "an edited puzzle is no longer marked solved");
        assert.match(await page.locator("#progress").textContent(), /^0 of 29 solved/);
        await shot(page, "runaway");
        await page.fill("#editor-input", SOLVE_1);
        await waitHeadline(page, /^Solved!/);
      });

      await step("hints come one at a time", async () => {
        const button = page.locator("#hint");
        assert.match(await button.textContent(), /Show hint 1 of/);
        await button.click();
        assert.equal(await page.locator("#hints li").count(), 1);
      });

      await step("the keyboard alone can use the editor", async () => {
        await page.locator("#editor-input").focus();
        await page.keyboard.press("Control+End");
        await page.keyboard.press("Tab");
        assert.match(await page.inputValue("#editor-input"), / {4}$/);
        await page.keyboard.press("Escape");
        await page.keyboard.press("Tab");
        assert.notEqual(await page.evaluate(() => document.activeElement.id), "editor-input");
        await page.fill("#editor-input", SOLVE_1);
        await waitHeadline(page, /^Solved!/);
      });

      await step("progress and code survive a reload", async () => {
        await page.reload();
        await page.locator("#title", { hasText: "Puzzle 1" }).waitFor();
        await waitHeadline(page, /^Solved!/);
        assert.match(await page.locator("#progress").textContent(), /^1 of 29 solved/);
        assert.match(await page.locator("#picker option[value='1']").textContent(), /^✓/);
        assert.equal(await page.inputValue("#editor-input"), SOLVE_1);
        await page.selectOption("#picker", "2");
        await page.locator("#title", { hasText: "Puzzle 2" }).waitFor();
        assert.equal(await page.inputValue("#editor-input"), OOB_2);
        assert.equal(await page.locator("#hints li").count(), 0);
        await shot(page, "reloaded");
      });

      await step("nothing is wider than the screen", async () => {
        const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(wide <= 0, `the page is ${wide} px wider than the window`);
      });

      await step("the export is the command line's workspace files", async () => {
        const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
        const file = path.join(ARTIFACTS, `${name}-export.zip`);
        await download.saveAs(file);
        const listing = execFileSync("python3", ["-c", "import sys, zipfile; print(sorted(zipfile.ZipFile(sys.argv[1]).namelist()))", file]).toString();
        assert.match(listing, /'01_map\.metal', '02_zip\.metal'/);
        // And it imports back.
        await page.setInputFiles("#import", file);
        await page.locator("#progress", { hasText: "Imported 2 files" }).waitFor();
      });

      await step("works offline once loaded", async () => {
        await page.evaluate(() => navigator.serviceWorker.ready);
        await page.reload(); // (the service worker now controls the page)
        await page.locator("#title", { hasText: "Puzzle 2" }).waitFor();
        await ctx.setOffline(true);
        await page.reload();
        await page.locator("#title", { hasText: "Puzzle 2" }).waitFor();
        await waitHeadline(page, /Failed/);
        await ctx.setOffline(false);
      });

      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });
}

// Every reference solution: the WebAssembly module answers exactly what the
// native build answers (every test's output, bit for bit, and the verdict),
// and its verdict is `metal-puzzles check --json`'s.
test("reference solutions: identical in WebAssembly and on the command line", async () => {
  const reference = JSON.parse(fs.readFileSync(need("PLAYGROUND_REFERENCE"), "utf8"));
  assert.equal(reference.length, 29);
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(path.join(SITE, "book.wasm")), {});
  const api = instance.exports;
  const ask = (request) => {
    const bytes = new TextEncoder().encode(JSON.stringify(request));
    const ptr = api.mp_alloc(bytes.length);
    new Uint8Array(api.memory.buffer, ptr, bytes.length).set(bytes);
    const len = api.mp_request(ptr, bytes.length);
    return JSON.parse(new TextDecoder().decode(new Uint8Array(api.memory.buffer, api.mp_answer_ptr(), len)));
  };
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "mp-ws-"));
  execFileSync(need("METAL_PUZZLES_BIN"), ["init", ws], { stdio: "ignore" });
  for (const r of reference) fs.writeFileSync(path.join(ws, r.file_name), r.text);
  const cli = JSON.parse(execFileSync(need("METAL_PUZZLES_BIN"), ["check", "--all", "--json", "--dir", ws]).toString());
  fs.rmSync(ws, { recursive: true, force: true });
  for (const r of reference) {
    const wasm = ask({ op: "check", puzzle: r.puzzle, source: r.text, outputs: true });
    assert.ok(wasm.ok, `puzzle ${r.puzzle}: ${wasm.error}`);
    assert.equal(wasm.ok.solved, true, `puzzle ${r.puzzle} is not solved by its reference solution in wasm`);
    assert.deepEqual(wasm.ok.outputs, r.native.outputs, `puzzle ${r.puzzle}: outputs differ`);
    assert.deepEqual(wasm.ok, r.native, `puzzle ${r.puzzle}: answers differ`);
    const entry = cli.puzzles.find((p) => p.number === r.puzzle);
    assert.deepEqual(wasm.ok.check, entry, `puzzle ${r.puzzle}: differs from check --json`);
  }
});
