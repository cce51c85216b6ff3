//! Prints, as one JSON document, every puzzle's reference solution (the
//! workspace file) with what the native build answers for it: the same
//! `check` request the page sends, with every test's output. The browser
//! tests (tools/playground/test_site.mjs) send the same files to the
//! WebAssembly module and to `metal-puzzles check --json` and compare.

#[path = "../../puzzles/tests/common/mod.rs"]
mod common;

fn main() {
    let list: Vec<serde_json::Value> = common::SOLUTIONS
        .iter()
        .map(|(slug, body)| {
            let p = puzzles::find(slug).expect("a puzzle of the book");
            let text = common::file_with(slug, body);
            let native = web::check(p, &text, true);
            serde_json::json!({ "puzzle": p.number, "file_name": p.file_name(), "text": text, "native": native })
        })
        .collect();
    println!("{}", serde_json::Value::Array(list));
}
