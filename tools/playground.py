#!/usr/bin/env python3
"""The puzzle book in a browser: build it as a folder of static files.

Usage:
  python3 tools/playground.py build OUT_DIR   compile crates/web to WebAssembly
                                              and write the site into OUT_DIR
  python3 tools/playground.py serve OUT_DIR [--port N]
                                              serve OUT_DIR on http://127.0.0.1:N/
                                              (any static file server will do)

The site needs no server code: open OUT_DIR/index.html over HTTP (GitHub
Pages, `python3 -m http.server`, ...). It starts at the book's first
puzzle. Needs the Rust target: `rustup target add wasm32-unknown-unknown`.
"""
import gzip
import hashlib
import http.server
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "tools" / "playground"
TARGET = "wasm32-unknown-unknown"
PROFILE = "wasm"
# The page's own files (the tests and their package files stay behind).
STATIC = ["index.html", "style.css", "app.js", "highlight.js", "zip.js", "worker.js"]


def fail(message, hint=None):
    print(f"error: {message}", file=sys.stderr)
    if hint:
        print(f"help: {hint}", file=sys.stderr)
    sys.exit(2)


def build_wasm():
    installed = subprocess.run(["rustup", "target", "list", "--installed"], capture_output=True, text=True)
    if installed.returncode == 0 and TARGET not in installed.stdout.split():
        fail(f"the Rust target `{TARGET}` is not installed", f"rustup target add {TARGET}")
    cmd = ["cargo", "build", "--locked", "-p", "web", "--target", TARGET, "--profile", PROFILE]
    print("+", " ".join(cmd), flush=True)
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        fail("the WebAssembly build failed (see above)")
    meta = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    return Path(meta["target_directory"]) / TARGET / PROFILE / "web.wasm"


def build(out):
    wasm = build_wasm()
    out.mkdir(parents=True, exist_ok=True)
    files = {name: (PAGE / name).read_bytes() for name in STATIC}
    files["book.wasm"] = wasm.read_bytes()
    version = hashlib.sha256(b"".join(hashlib.sha256(files[n]).digest() for n in sorted(files))).hexdigest()[:16]
    cached = ["./"] + sorted(files)
    sw = (PAGE / "sw.js").read_text()
    files["sw.js"] = sw.replace("__VERSION__", f"metal-puzzles-{version}").replace("__FILES__", json.dumps(cached)).encode()
    for name, data in files.items():
        tmp = out / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(out / name)
    raw = sum(len(d) for d in files.values())
    packed = sum(len(gzip.compress(d, 9)) for d in files.values())
    wasm_packed = len(gzip.compress(files["book.wasm"], 9))
    print(f"wrote {out}/ ({len(files)} files, version {version})")
    print(f"download: {raw / 1e6:.2f} MB, {packed / 1e6:.2f} MB gzip-compressed (book.wasm {wasm_packed / 1e6:.2f} MB gzip)")


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm", ".js": "text/javascript"}

    def log_message(self, *args):
        pass


def serve(out, port):
    if not (out / "index.html").exists():
        fail(f"`{out}` holds no site", f"python3 tools/playground.py build {out}")
    handler = lambda *a, **k: Handler(*a, directory=str(out), **k)  # noqa: E731
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"serving {out} on http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass


def main(argv):
    if len(argv) >= 2 and argv[0] == "build" and len(argv) == 2:
        build(Path(argv[1]).resolve())
    elif len(argv) >= 2 and argv[0] == "serve":
        port = 8000
        if len(argv) == 4 and argv[2] == "--port" and argv[3].isdigit():
            port = int(argv[3])
        elif len(argv) != 2:
            fail("usage: python3 tools/playground.py serve OUT_DIR [--port N]")
        serve(Path(argv[1]).resolve(), port)
    else:
        fail("usage: python3 tools/playground.py build OUT_DIR | serve OUT_DIR [--port N]")


if __name__ == "__main__":
    main(sys.argv[1:])
