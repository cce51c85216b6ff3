//! Element types understood by the simulator and their names in the contract,
//! in MLX/NumPy, in Metal and in the `.npy` format.

use std::fmt;

/// The element types a buffer may hold (Metal has no 64-bit float).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
}

/// Every dtype, in the order the contract lists them.
pub const ALL_DTYPES: [DType; 12] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
];

const VALID_NAMES: &str = "bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 \
(or bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32)";

impl DType {
    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 => 8,
        }
    }

    /// Parses a dtype name: the contract's short names, MLX/NumPy names and
    /// Metal scalar type names.
    pub fn parse(s: &str) -> Result<DType, String> {
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        let d = match lower.as_str() {
            "bool" | "bool_" | "b1" => DType::Bool,
            "i8" | "int8" | "int8_t" | "char" => DType::I8,
            "i16" | "int16" | "int16_t" | "short" => DType::I16,
            "i32" | "int32" | "int32_t" | "int" => DType::I32,
            "i64" | "int64" | "int64_t" | "long" => DType::I64,
            "u8" | "uint8" | "uint8_t" | "uchar" => DType::U8,
            "u16" | "uint16" | "uint16_t" | "ushort" => DType::U16,
            "u32" | "uint32" | "uint32_t" | "uint" => DType::U32,
            "u64" | "uint64" | "uint64_t" | "ulong" => DType::U64,
            "f16" | "float16" | "float16_t" | "half" => DType::F16,
            "bf16" | "bfloat16" | "bfloat16_t" | "bfloat" => DType::BF16,
            "f32" | "float32" | "float" | "single" => DType::F32,
            "f64" | "float64" | "double" => {
                return Err(format!("dtype `{t}` is not supported: Metal has no double (64-bit float); use f32 (float32)"))
            }
            _ => return Err(format!("unknown dtype `{t}`; valid dtypes: {VALID_NAMES}")),
        };
        Ok(d)
    }

    /// The contract's short name (`f32`, `u8`, `bool`, ...).
    pub fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
        }
    }

    /// MLX's (and NumPy's) name: `float32`, `bfloat16`, `bool`, ...
    pub fn mlx_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
        }
    }

    /// The Metal type as MLX's generated kernel source spells it.
    pub fn metal_type(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8_t",
            DType::I16 => "int16_t",
            DType::I32 => "int32_t",
            DType::I64 => "int64_t",
            DType::U8 => "uint8_t",
            DType::U16 => "uint16_t",
            DType::U32 => "uint32_t",
            DType::U64 => "uint64_t",
            DType::F16 => "float16_t",
            DType::BF16 => "bfloat16_t",
            DType::F32 => "float",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64 | DType::F16 | DType::BF16 | DType::F32)
    }

    pub fn is_integer(self) -> bool {
        !self.is_float() && self != DType::Bool
    }

    /// The `.npy` descr this dtype is written with (bf16 as `<u2` bit patterns).
    pub fn npy_descr(self) -> &'static str {
        match self {
            DType::Bool => "|b1",
            DType::I8 => "|i1",
            DType::I16 => "<i2",
            DType::I32 => "<i4",
            DType::I64 => "<i8",
            DType::U8 => "|u1",
            DType::U16 | DType::BF16 => "<u2",
            DType::U32 => "<u4",
            DType::U64 => "<u8",
            DType::F16 => "<f2",
            DType::F32 => "<f4",
        }
    }

    /// Inclusive integer range of an integer or bool dtype.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::Bool => (0, 1),
            DType::I8 => (i8::MIN as i128, i8::MAX as i128),
            DType::I16 => (i16::MIN as i128, i16::MAX as i128),
            DType::I32 => (i32::MIN as i128, i32::MAX as i128),
            DType::I64 => (i64::MIN as i128, i64::MAX as i128),
            DType::U8 => (0, u8::MAX as i128),
            DType::U16 => (0, u16::MAX as i128),
            DType::U32 => (0, u32::MAX as i128),
            DType::U64 => (0, u64::MAX as i128),
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mlx_name())
    }
}

impl std::str::FromStr for DType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::parse(s)
    }
}
