//! `metal-puzzles`: run Metal compute kernels on a simulated Apple GPU
//! (the command line lives in the library, `src/lib.rs`).

// The front end allocates many small, short-lived nodes (types, expressions,
// template environments); glibc's allocator spent about a quarter of lint
// time on them. mimalloc halves that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    metal_puzzles::main_from_env()
}
