//! Run the whole MSL front end (preprocess, parse, check, render) on
//! arbitrary bytes. Any panic, stack overflow, or runaway allocation is a bug.
//!
//! The input may hold headers too: `\n#--\n` separates the main file from
//! up to three headers `a.h`, `b.h`, `c.h`, which every file can include
//! (quoted or angled), so include cycles, `#pragma once` and include
//! guards are fuzzed along with everything else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use msl::include::{CapturedHeaders, CapturedInclude};

const HEADERS: [&str; 3] = ["a.h", "b.h", "c.h"];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(4, "\n#--\n");
    let main = parts.next().unwrap_or_default().to_string();
    let headers: Vec<(&str, String)> = HEADERS.iter().copied().zip(parts.map(str::to_string)).collect();
    let mut entries = Vec::new();
    for from in std::iter::once("fuzz.metal").chain(headers.iter().map(|h| h.0)) {
        for (name, body) in &headers {
            for quoted in [true, false] {
                entries.push(CapturedInclude {
                    from: from.to_string(),
                    spelled: name.to_string(),
                    quoted,
                    name: name.to_string(),
                    text: body.clone(),
                });
            }
        }
    }
    let mut opts = msl::CompileOptions::default();
    opts.captured_headers = Some(std::sync::Arc::new(CapturedHeaders { entries }));
    let c = msl::compile("fuzz.metal", &main, &opts);
    // Rendering walks every span back into the source: exercise it too.
    let _ = c.render(false);
    for d in &c.diagnostics.items {
        let _ = msl::diag::to_json(&c.sources, d);
    }
});
