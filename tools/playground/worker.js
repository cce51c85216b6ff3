// The simulator's thread: one WebAssembly instance of the book (crates/web)
// answering JSON requests. The page terminates this worker to cancel a
// check (a new edit, a time limit) and starts another from the same module.

let api = null;

function call(request) {
  const enc = new TextEncoder();
  const bytes = enc.encode(JSON.stringify(request));
  const ptr = api.mp_alloc(bytes.length);
  new Uint8Array(api.memory.buffer, ptr, bytes.length).set(bytes);
  const len = api.mp_request(ptr, bytes.length);
  const out = new Uint8Array(api.memory.buffer, api.mp_answer_ptr(), len);
  return JSON.parse(new TextDecoder().decode(out));
}

function panicMessage() {
  try {
    const len = api.mp_panic_len();
    if (!len) return "";
    return new TextDecoder().decode(new Uint8Array(api.memory.buffer, api.mp_panic_ptr(), len));
  } catch {
    return "";
  }
}

onmessage = async (e) => {
  const msg = e.data;
  if (msg.type === "init") {
    try {
      const instance = await WebAssembly.instantiate(msg.module, {});
      api = instance.exports;
      postMessage({ type: "ready" });
    } catch (err) {
      postMessage({ type: "fatal", message: `the simulator could not start: ${err}` });
    }
    return;
  }
  const start = performance.now();
  try {
    const answer = call(msg.request);
    postMessage({ type: "answer", id: msg.id, answer, ms: performance.now() - start });
  } catch (err) {
    // A trap (a panic, or the stack running out): the instance may be in a
    // broken state, so the page replaces this worker.
    const why = panicMessage() || String(err);
    postMessage({ type: "crash", id: msg.id, message: why });
  }
};
