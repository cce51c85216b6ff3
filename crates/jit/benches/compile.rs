//! Compile latency of the compiled tier: each kernel of `tests/kernels/`
//! (a tiled matmul, a tree reduction, an atomic histogram, mixed control
//! flow, a scan with barriers in a loop) from lowered IR to native code,
//! with checks off and (where the kernel compiles so) with `--check all`;
//! and a generated large kernel, which gets the quick register allocator.
//!
//! cargo bench -p jit --bench compile -- --warm-up-time 1 --measurement-time 3

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::Path;

fn kernels() -> Vec<(String, gpu::Kernel)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("tests/kernels").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let src = std::fs::read_to_string(&path).expect("read");
        let name = src.lines().find_map(|l| l.strip_prefix("// KERNEL:")).expect("a KERNEL line").trim().to_string();
        let c = msl::compile("bench.metal", &src, &Default::default());
        let p = c.program.as_ref().expect("compiles");
        let (id, _) = p.kernels().find(|(_, f)| f.name == name).expect("the kernel");
        let k = gpu::lower::lower_kernel(p, id).expect("lowers");
        out.push((path.file_stem().unwrap().to_string_lossy().to_string(), k));
    }
    // A large kernel (400 values live across a barrier, some 25,000 SSA
    // values with checks on): the single-pass register allocator's size.
    let mut src = String::from("kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n");
    for j in 0..400 {
        src += &format!("  float v{j} = a[(i + {j}u) % 64u];\n");
    }
    src += "  threadgroup_barrier(mem_flags::mem_threadgroup);\n  float t = 0.0f;\n";
    for j in 0..400 {
        src += &format!("  t += v{j};\n");
    }
    src += "  a[i] = t;\n}\n";
    let c = msl::compile("large.metal", &src, &Default::default());
    let p = c.program.as_ref().expect("compiles");
    let (id, _) = p.kernels().next().expect("the kernel");
    out.push(("large (400 values across a barrier)".into(), gpu::lower::lower_kernel(p, id).expect("lowers")));
    out
}

fn bench(c: &mut Criterion) {
    for (name, k) in kernels() {
        c.bench_function(&format!("jit compile {name}"), |b| b.iter(|| jit::compile(&k).expect("compiles")));
        // (With checks on the code keeps the shadow itself: more of it.)
        if jit::compile_checked(&k, gpu::CheckLevel::All).is_ok() {
            c.bench_function(&format!("jit compile {name} --check all"), |b| {
                b.iter(|| jit::compile_checked(&k, gpu::CheckLevel::All).expect("compiles"))
            });
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
