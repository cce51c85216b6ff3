//! Print a kernel's lowered IR (a development aid for the interpreter's
//! hot paths): `cargo run --release -p gpu --example ir FILE KERNEL`.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (Some(file), Some(name)) = (a.get(1), a.get(2)) else {
        eprintln!("usage: ir FILE.metal KERNEL");
        std::process::exit(2);
    };
    let src = std::fs::read_to_string(file).unwrap_or_else(|e| {
        eprintln!("{file}: {e}");
        std::process::exit(2)
    });
    let c = msl::compile(file, &src, &Default::default());
    let Some(p) = c.program.as_ref() else {
        eprintln!("{file}: does not compile");
        std::process::exit(1)
    };
    for (id, f) in p.kernels() {
        if f.name == *name {
            match gpu::lower::lower_kernel(p, id) {
                Ok(k) => println!("{:#?}\nprivate: {:?}\nthreadgroup: {:?}", k.body, k.private_vars, k.threadgroup_vars),
                Err(e) => eprintln!("{e:?}"),
            }
        }
    }
}
