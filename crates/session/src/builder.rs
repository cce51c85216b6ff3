//! The Rust-facing call builder: bind slices and scalars by parameter
//! name, dispatch, run, read outputs back as vectors.

use crate::bind::Value;
use crate::{Dispatch, DispatchMode, Error, Kernel, Outcome, RunOptions};
use arrays::{Array, DType};

/// A Rust scalar type with a Metal counterpart.
pub trait Element: Copy {
    const DTYPE: DType;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(&bytes[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}

element!(f32 => F32, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64, half::f16 => F16, half::bf16 => BF16);

fn array_of<T: Element>(values: &[T], shape: &[usize]) -> Result<Array, String> {
    let mut bytes = Vec::with_capacity(values.len() * T::DTYPE.size());
    for v in values {
        v.put(&mut bytes);
    }
    Array::from_bytes(T::DTYPE, shape, bytes)
}

/// An output's elements as `T`.
pub(crate) fn read_elements<T: Element>(name: &str, a: &Array) -> Result<Vec<T>, String> {
    if a.dtype != T::DTYPE {
        return Err(format!("output `{name}` has dtype {}, not {}", a.dtype.mlx_name(), T::DTYPE.mlx_name()));
    }
    let bytes = a.contiguous_bytes();
    Ok(bytes.chunks_exact(T::DTYPE.size()).map(T::get).collect())
}

/// One call of a kernel, built up by parameter name:
/// `kernel.call().input("x", &xs).output::<f32>("y", n).scalar("n", n as u32).threads([n, 1, 1], [64, 1, 1]).run()`.
pub struct Call<'k> {
    kernel: &'k Kernel<'k>,
    values: Vec<(String, Value)>,
    dispatch: Dispatch,
    options: RunOptions,
    error: Option<String>,
}

impl<'k> Call<'k> {
    pub(crate) fn new(kernel: &'k Kernel<'k>) -> Call<'k> {
        Call {
            kernel,
            values: Vec::new(),
            dispatch: Dispatch { grid: [1, 1, 1], threadgroup: [1, 1, 1], mode: DispatchMode::Threads },
            options: RunOptions { budget: crate::DEFAULT_BUDGET, ..RunOptions::default() },
            error: None,
        }
    }

    fn push(mut self, name: &str, value: Result<Array, String>) -> Self {
        match value {
            Ok(a) => self.values.push((name.to_string(), Value::Array(a))),
            Err(e) => {
                self.error.get_or_insert(format!("parameter `{name}`: {e}"));
            }
        }
        self
    }

    /// A buffer holding `values` (one-dimensional).
    pub fn input<T: Element>(self, name: &str, values: &[T]) -> Self {
        let a = array_of(values, &[values.len()]);
        self.push(name, a)
    }

    /// A buffer of `len` zeros of `T` that the kernel writes; read it back
    /// with [`Outcome::read`].
    pub fn output<T: Element>(self, name: &str, len: usize) -> Self {
        self.push(name, Ok(Array::zeros(T::DTYPE, &[len])))
    }

    /// A `constant T&` scalar.
    pub fn scalar<T: Element>(self, name: &str, value: T) -> Self {
        let a = array_of(&[value], &[]);
        self.push(name, a)
    }

    /// Raw bytes for a struct or vector parameter (`constant Params&`).
    pub fn bytes(self, name: &str, bytes: Vec<u8>) -> Self {
        let n = bytes.len();
        self.push(name, Array::from_bytes(DType::U8, &[n], bytes))
    }

    /// A struct, vector or array parameter as JSON, laid out as Metal lays it out.
    pub fn json(mut self, name: &str, value: serde_json::Value) -> Self {
        self.values.push((name.to_string(), Value::Json(value)));
        self
    }

    /// Any array (from `.npy`, generated...).
    pub fn array(mut self, name: &str, array: Array) -> Self {
        self.values.push((name.to_string(), Value::Array(array)));
        self
    }

    /// `dispatchThreads`: `grid` counts threads; edge threadgroups may be partial.
    pub fn threads(mut self, grid: [u32; 3], threadgroup: [u32; 3]) -> Self {
        self.dispatch = Dispatch { grid, threadgroup, mode: DispatchMode::Threads };
        self
    }

    /// `dispatchThreadgroups`: `grid` counts threadgroups.
    pub fn threadgroups(mut self, grid: [u32; 3], threadgroup: [u32; 3]) -> Self {
        self.dispatch = Dispatch { grid, threadgroup, mode: DispatchMode::Threadgroups };
        self
    }

    /// The sanitizer level and every other run option.
    pub fn options(mut self, options: RunOptions) -> Self {
        self.options = options;
        self
    }

    /// Bind, run, and hand back the outcome.
    pub fn run(self) -> Result<Outcome, Error> {
        if let Some(e) = self.error {
            return Err(Error::Usage(e));
        }
        let bindings = self.kernel.bind(self.values)?;
        self.kernel.run(&bindings, self.dispatch, &self.options)
    }
}
