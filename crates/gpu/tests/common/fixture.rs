//! The header of a kernel fixture (`KERNEL`, `GRID`, `BUFFER`...; see
//! `tests/fixtures.rs`) and the buffers it asks for. Also used by the
//! compiled tier's differential test (crates/jit).

use std::path::Path;

pub struct Case {
    pub kernel: String,
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
    pub buffers: Vec<(u32, String, usize, String)>,
    pub expect: Vec<(String, usize)>,
    pub outputs: Vec<(u32, Vec<f64>)>,
}

pub fn dims(v: &str) -> [u32; 3] {
    let mut d = [1u32; 3];
    for (i, x) in v.split(',').enumerate().take(3) {
        d[i] = x.trim().parse().expect("a dimension");
    }
    d
}

pub fn parse(src: &str, path: &Path) -> Case {
    let mut c =
        Case { kernel: String::new(), grid: [1; 3], threadgroup: [1; 3], buffers: Vec::new(), expect: Vec::new(), outputs: Vec::new() };
    for line in src.lines().take_while(|l| l.starts_with("//")) {
        let Some((key, value)) = line.trim_start_matches("//").split_once(':') else { continue };
        let value = value.trim();
        match key.trim() {
            "KERNEL" => c.kernel = value.to_string(),
            "GRID" => c.grid = dims(value),
            "THREADGROUP" => c.threadgroup = dims(value),
            "BUFFER" => {
                let f: Vec<&str> = value.split_whitespace().collect();
                assert_eq!(f.len(), 4, "{}: BUFFER takes index, contents, count, dtype", path.display());
                c.buffers.push((f[0].parse().expect("index"), f[1].into(), f[2].parse().expect("count"), f[3].into()));
            }
            "EXPECT" => {
                let (kind, at) = value.split_once('@').expect("EXPECT: kind @ line");
                c.expect.push((kind.trim().to_string(), at.trim().parse().expect("a line")));
            }
            "OUTPUT" => {
                let (index, values) = value.split_once('=').expect("OUTPUT: index = values");
                let values = values.split_whitespace().map(|v| v.parse().unwrap_or_else(|_| panic!("OUTPUT value `{v}`"))).collect();
                c.outputs.push((index.trim().parse().expect("a buffer index"), values));
            }
            _ => {}
        }
    }
    assert!(!c.kernel.is_empty(), "{}: no KERNEL line", path.display());
    c
}

pub fn element(dtype: &str, v: f64) -> Vec<u8> {
    match dtype {
        "f32" => (v as f32).to_le_bytes().to_vec(),
        "f16" => half::f16::from_f64(v).to_le_bytes().to_vec(),
        "i32" => (v as i32).to_le_bytes().to_vec(),
        "u32" => (v as u32).to_le_bytes().to_vec(),
        "u16" => (v as u16).to_le_bytes().to_vec(),
        "u8" => vec![v as u8],
        "u64" => (v as u64).to_le_bytes().to_vec(),
        other => panic!("unknown dtype {other}"),
    }
}

/// The elements of a buffer of `dtype`, as f64 (exact for every dtype here).
pub fn elements(dtype: &str, bytes: &[u8]) -> Vec<f64> {
    let width = element(dtype, 0.0).len();
    bytes
        .chunks_exact(width)
        .map(|b| match dtype {
            "f32" => f32::from_le_bytes(b.try_into().unwrap()) as f64,
            "f16" => half::f16::from_le_bytes(b.try_into().unwrap()).to_f64(),
            "i32" => i32::from_le_bytes(b.try_into().unwrap()) as f64,
            "u32" => u32::from_le_bytes(b.try_into().unwrap()) as f64,
            "u16" => u16::from_le_bytes(b.try_into().unwrap()) as f64,
            "u8" => b[0] as f64,
            "u64" => u64::from_le_bytes(b.try_into().unwrap()) as f64,
            other => panic!("unknown dtype {other}"),
        })
        .collect()
}

pub fn contents(init: &str, count: usize, dtype: &str) -> Vec<u8> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    (0..count)
        .flat_map(|i| {
            let v = match init {
                "zeros" | "uninit" => 0.0,
                "ones" => 1.0,
                "arange" => i as f64,
                "rand" => {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
                }
                s if s.starts_with("mod=") => (i % s[4..].parse::<usize>().expect("modulus")) as f64,
                s if s.starts_with("fill=") => s[5..].parse().expect("a value"),
                other => panic!("unknown contents {other}"),
            };
            element(dtype, v)
        })
        .collect()
}
