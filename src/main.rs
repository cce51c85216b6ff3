//! `metal-puzzles`: run Metal compute kernels on a simulated Apple GPU
//! (the command line lives in the library, `src/lib.rs`).

// The front end allocates many small, short-lived nodes (types, expressions,
// template environments); glibc's allocator spent about a quarter of lint
// time on them. mimalloc halves that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Whether fd 1 was closed when the process started (`>&-`). Looked at from
/// a constructor, before Rust's runtime puts `/dev/null` on a closed
/// standard descriptor (afterwards `>&-` cannot be told from a caller's
/// `stdout=DEVNULL`, which is legitimate).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static PROBE_STDOUT: extern "C" fn() = {
    extern "C" fn probe() {
        // SAFETY: F_GETFD only queries the descriptor.
        if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    probe
};

fn main() -> std::process::ExitCode {
    metal_puzzles::main_from_env(STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed))
}
