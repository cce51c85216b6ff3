//! Run the whole MSL front end (preprocess, parse, check, render) on
//! arbitrary bytes. Any panic, stack overflow, or runaway allocation is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let c = msl::compile("fuzz.metal", &text, &msl::CompileOptions::default());
    // Rendering walks every span back into the source: exercise it too.
    let _ = c.render(false);
    for d in &c.diagnostics.items {
        let _ = msl::diag::to_json(&c.sources, d);
    }
});
