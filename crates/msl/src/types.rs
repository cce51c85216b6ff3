//! Semantic types of MSL with Metal's sizes and alignments.
//!
//! `Type` is a plain value (cheap to clone for the small trees kernels use).
//! Structs and enums are referred to by index into the program's tables,
//! which is why layout queries take a [`TypeTables`].

use crate::ast::AddressSpace;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    Char,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    Half,
    BFloat,
    Float,
}

impl Scalar {
    pub const ALL: [Scalar; 12] = [
        Scalar::Bool,
        Scalar::Char,
        Scalar::UChar,
        Scalar::Short,
        Scalar::UShort,
        Scalar::Int,
        Scalar::UInt,
        Scalar::Long,
        Scalar::ULong,
        Scalar::Half,
        Scalar::BFloat,
        Scalar::Float,
    ];

    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort | Scalar::Half | Scalar::BFloat => 2,
            Scalar::Int | Scalar::UInt | Scalar::Float => 4,
            Scalar::Long | Scalar::ULong => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Half | Scalar::BFloat | Scalar::Float)
    }

    /// Integer types, excluding bool.
    pub fn is_integer(self) -> bool {
        !self.is_float() && self != Scalar::Bool
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Scalar::Char | Scalar::Short | Scalar::Int | Scalar::Long) || self.is_float()
    }

    /// The type as the one scalar arithmetic (`gpu_math::scalar`) sees it.
    pub fn arith(self) -> gpu_math::scalar::ScalarType {
        use gpu_math::scalar::ScalarType as T;
        match self {
            Scalar::Bool => T::Bool,
            Scalar::Half => T::Float(gpu_math::FloatKind::F16),
            Scalar::BFloat => T::Float(gpu_math::FloatKind::BF16),
            Scalar::Float => T::Float(gpu_math::FloatKind::F32),
            s => T::Int(gpu_math::IntKind { bits: s.size() * 8, signed: s.is_signed() }),
        }
    }

    /// The floating kind of `half`, `bfloat` and `float` (f32 for the others).
    pub fn float_kind(self) -> gpu_math::FloatKind {
        match self {
            Scalar::Half => gpu_math::FloatKind::F16,
            Scalar::BFloat => gpu_math::FloatKind::BF16,
            _ => gpu_math::FloatKind::F32,
        }
    }

    /// The MSL spelling (`uint`, `half`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Char => "char",
            Scalar::UChar => "uchar",
            Scalar::Short => "short",
            Scalar::UShort => "ushort",
            Scalar::Int => "int",
            Scalar::UInt => "uint",
            Scalar::Long => "long",
            Scalar::ULong => "ulong",
            Scalar::Half => "half",
            Scalar::BFloat => "bfloat",
            Scalar::Float => "float",
        }
    }

    /// Integer conversion rank (C++ [conv.rank]); floats rank by size.
    pub fn rank(self) -> u8 {
        match self {
            Scalar::Bool => 0,
            Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort => 2,
            Scalar::Int | Scalar::UInt => 3,
            Scalar::Long | Scalar::ULong => 4,
            Scalar::BFloat | Scalar::Half => 5,
            Scalar::Float => 6,
        }
    }

    pub fn to_unsigned(self) -> Scalar {
        match self {
            Scalar::Char => Scalar::UChar,
            Scalar::Short => Scalar::UShort,
            Scalar::Int => Scalar::UInt,
            Scalar::Long => Scalar::ULong,
            s => s,
        }
    }

    /// Integral promotion: types narrower than int become int.
    pub fn promoted(self) -> Scalar {
        if self.rank() < 3 {
            Scalar::Int
        } else {
            self
        }
    }

    /// The usual arithmetic conversions of C++ for two scalar operands.
    pub fn common(a: Scalar, b: Scalar) -> Scalar {
        if a.is_float() || b.is_float() {
            // float beats half/bfloat; half with bfloat gives float (Metal has
            // no implicit conversion between the two 16-bit kinds).
            return match (a, b) {
                (x, y) if x == y => x,
                (Scalar::Float, _) | (_, Scalar::Float) => Scalar::Float,
                (Scalar::Half, Scalar::BFloat) | (Scalar::BFloat, Scalar::Half) => Scalar::Float,
                (x, y) if x.is_float() => {
                    let _ = y;
                    x
                }
                (_, y) => y,
            };
        }
        let (a, b) = (a.promoted(), b.promoted());
        if a == b {
            return a;
        }
        if a.is_signed() == b.is_signed() {
            return if a.rank() >= b.rank() { a } else { b };
        }
        let (s, u) = if a.is_signed() { (a, b) } else { (b, a) };
        if u.rank() >= s.rank() {
            u
        } else if s.size() > u.size() {
            s
        } else {
            s.to_unsigned()
        }
    }
}

/// Which builtin enumeration a value of `Type::BuiltinEnum` belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinEnum {
    /// `mem_flags::mem_none | mem_device | mem_threadgroup | mem_texture`
    MemFlags,
    /// `memory_order_relaxed` ...
    MemoryOrder,
    /// `thread_scope_thread` ...
    ThreadScope,
}

impl BuiltinEnum {
    pub fn name(self) -> &'static str {
        match self {
            BuiltinEnum::MemFlags => "mem_flags",
            BuiltinEnum::MemoryOrder => "memory_order",
            BuiltinEnum::ThreadScope => "thread_scope",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StructId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EnumId(pub u32);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    Scalar(Scalar),
    /// `float4`, `packed_float3`, `vec<half, 2>`. `len` is 2..=4.
    Vector {
        elem: Scalar,
        len: u8,
        packed: bool,
    },
    /// `float4x4`: `cols` columns of `rows`-vectors.
    Matrix {
        elem: Scalar,
        cols: u8,
        rows: u8,
    },
    Array {
        elem: Box<Type>,
        len: u32,
    },
    Pointer {
        pointee: Box<Type>,
        space: AddressSpace,
        is_const: bool,
    },
    /// `thread const T&` and friends.
    Reference {
        referee: Box<Type>,
        space: AddressSpace,
        is_const: bool,
    },
    Struct(StructId),
    Enum(EnumId),
    /// `atomic_int`, `atomic<float>`, ...
    Atomic(Scalar),
    /// `simdgroup_float8x8`: an 8x8 matrix spread over a SIMD-group.
    SimdMatrix {
        elem: Scalar,
        rows: u8,
        cols: u8,
    },
    BuiltinEnum(BuiltinEnum),
    /// The type of `nullptr`.
    NullPtr,
    /// A pointer to a function `ret(params…)`. Its values are known at
    /// compile time (a function named in the source); see `hir::ExprKind::FuncRef`.
    FnPtr {
        ret: Box<Type>,
        params: Vec<Type>,
    },
}

impl Type {
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);
    pub const INT: Type = Type::Scalar(Scalar::Int);
    pub const UINT: Type = Type::Scalar(Scalar::UInt);
    pub const FLOAT: Type = Type::Scalar(Scalar::Float);
    pub const HALF: Type = Type::Scalar(Scalar::Half);
    pub const ULONG: Type = Type::Scalar(Scalar::ULong);

    pub fn vector(elem: Scalar, len: u8) -> Type {
        if len == 1 {
            Type::Scalar(elem)
        } else {
            Type::Vector { elem, len, packed: false }
        }
    }

    pub fn pointer(pointee: Type, space: AddressSpace, is_const: bool) -> Type {
        Type::Pointer { pointee: Box::new(pointee), space, is_const }
    }

    /// The scalar of a scalar or vector (or matrix) type.
    pub fn elem_scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            Type::Vector { elem, .. } | Type::Matrix { elem, .. } => Some(*elem),
            _ => None,
        }
    }

    /// Number of lanes of a scalar (1) or vector type.
    pub fn vector_len(&self) -> Option<u8> {
        match self {
            Type::Scalar(_) => Some(1),
            Type::Vector { len, .. } => Some(*len),
            _ => None,
        }
    }

    pub fn is_scalar(&self) -> bool {
        matches!(self, Type::Scalar(_))
    }

    pub fn is_vector(&self) -> bool {
        matches!(self, Type::Vector { .. })
    }

    /// Scalars and vectors: what arithmetic operators take.
    pub fn is_arithmetic(&self) -> bool {
        matches!(self, Type::Scalar(_) | Type::Vector { .. })
    }

    pub fn is_pointer(&self) -> bool {
        matches!(self, Type::Pointer { .. })
    }

    pub fn is_void(&self) -> bool {
        matches!(self, Type::Void)
    }

    /// The type with a reference removed.
    pub fn strip_ref(&self) -> &Type {
        match self {
            Type::Reference { referee, .. } => referee,
            t => t,
        }
    }
}

/// A struct's layout as Metal lays it out in buffers.
/// What attributes change in a struct's layout: `packed` (every member at
/// alignment 1), `alignas(N)`/`aligned(N)` on the struct (at least `N`) and
/// on members (`field_align[i]`, 0 for none; never lowers the alignment).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayoutAttrs {
    pub packed: bool,
    pub align: u64,
    pub field_align: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructField {
    pub name: String,
    pub ty: Type,
    pub offset: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    /// Display name, with template arguments for instances (`Pair<float>`).
    pub name: String,
    pub fields: Vec<StructField>,
    pub size: u32,
    pub align: u32,
    /// A union: every field at offset 0, one object's bytes seen as any
    /// member (reading another member reinterprets them, as on the GPU).
    pub is_union: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    pub name: String,
    pub underlying: Scalar,
    pub scoped: bool,
    pub values: Vec<(String, i64)>,
}

/// The struct and enum tables types refer to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeTables {
    pub structs: Vec<StructDef>,
    pub enums: Vec<EnumDef>,
}

impl TypeTables {
    pub fn struct_def(&self, id: StructId) -> &StructDef {
        &self.structs[id.0 as usize]
    }

    pub fn enum_def(&self, id: EnumId) -> &EnumDef {
        &self.enums[id.0 as usize]
    }

    /// `sizeof(T)` in bytes, Metal rules (`float3` is 16, `packed_float3` 12).
    pub fn size_of(&self, ty: &Type) -> u64 {
        match ty {
            Type::Void | Type::NullPtr => 0,
            Type::Scalar(s) => s.size() as u64,
            Type::Vector { elem, len, packed } => {
                let n = if *packed || *len != 3 { *len } else { 4 };
                elem.size() as u64 * n as u64
            }
            Type::Matrix { elem, cols, rows } => *cols as u64 * self.size_of(&Type::vector(*elem, *rows)),
            Type::Array { elem, len } => self.size_of(elem).saturating_mul(*len as u64),
            Type::Pointer { .. } | Type::Reference { .. } | Type::FnPtr { .. } => 8,
            Type::Struct(id) => self.struct_def(*id).size as u64,
            Type::Enum(id) => self.enum_def(*id).underlying.size() as u64,
            Type::Atomic(s) => s.size() as u64,
            // Per thread, a SIMD-group matrix holds 64 / 32 = 2 elements.
            Type::SimdMatrix { elem, .. } => elem.size() as u64 * 2,
            Type::BuiltinEnum(_) => 4,
        }
    }

    /// `alignof(T)`.
    pub fn align_of(&self, ty: &Type) -> u64 {
        match ty {
            Type::Void | Type::NullPtr => 1,
            Type::Scalar(s) => s.size() as u64,
            Type::Vector { elem, packed: true, .. } => elem.size() as u64,
            Type::Vector { .. } => self.size_of(ty),
            Type::Matrix { elem, rows, .. } => self.size_of(&Type::vector(*elem, *rows)),
            Type::Array { elem, .. } => self.align_of(elem),
            Type::Pointer { .. } | Type::Reference { .. } | Type::FnPtr { .. } => 8,
            Type::Struct(id) => self.struct_def(*id).align as u64,
            Type::Enum(id) => self.enum_def(*id).underlying.size() as u64,
            Type::Atomic(s) => s.size() as u64,
            Type::SimdMatrix { elem, .. } => elem.size() as u64,
            Type::BuiltinEnum(_) => 4,
        }
    }

    /// Lay out fields in order with natural alignment; returns (fields, size, align).
    pub fn layout_struct(&self, fields: Vec<(String, Type)>) -> (Vec<StructField>, u32, u32) {
        self.layout(fields, false, &LayoutAttrs::default())
    }

    /// Lay out a union's fields, all at offset 0; returns (fields, size, align).
    pub fn layout_union(&self, fields: Vec<(String, Type)>) -> (Vec<StructField>, u32, u32) {
        self.layout(fields, true, &LayoutAttrs::default())
    }

    /// Lay out a struct's (or a union's) fields as clang does for the
    /// attributes given; returns (fields, size, align).
    pub fn layout(&self, fields: Vec<(String, Type)>, union: bool, attrs: &LayoutAttrs) -> (Vec<StructField>, u32, u32) {
        let mut end: u64 = 0;
        let mut align: u64 = attrs.align.max(1);
        let mut out = Vec::with_capacity(fields.len());
        for (i, (name, ty)) in fields.into_iter().enumerate() {
            let natural = if attrs.packed { 1 } else { self.align_of(&ty).max(1) };
            let a = natural.max(attrs.field_align.get(i).copied().unwrap_or(0));
            let offset = if union { 0 } else { end.div_ceil(a) * a };
            end = if union { end.max(self.size_of(&ty)) } else { offset.saturating_add(self.size_of(&ty)) };
            out.push(StructField { name, ty, offset: offset.min(u32::MAX as u64) as u32 });
            align = align.max(a);
        }
        let size = end.div_ceil(align) * align;
        (out, size.min(u32::MAX as u64) as u32, align.min(u32::MAX as u64) as u32)
    }

    /// How the type is spelled in MSL, for messages.
    pub fn display(&self, ty: &Type) -> String {
        let mut s = String::new();
        self.write_type(&mut s, ty);
        s
    }

    fn write_type(&self, out: &mut String, ty: &Type) {
        use std::fmt::Write;
        match ty {
            Type::Void => out.push_str("void"),
            Type::Scalar(s) => out.push_str(s.name()),
            Type::Vector { elem, len, packed } => {
                let _ = write!(out, "{}{}{}", if *packed { "packed_" } else { "" }, elem.name(), len);
            }
            Type::Matrix { elem, cols, rows } => {
                let _ = write!(out, "{}{}x{}", elem.name(), cols, rows);
            }
            Type::Array { elem, len } => {
                // Print innermost element first: float[4][8].
                let mut dims = vec![*len];
                let mut e: &Type = elem;
                while let Type::Array { elem, len } = e {
                    dims.push(*len);
                    e = elem;
                }
                self.write_type(out, e);
                for d in dims {
                    let _ = write!(out, "[{d}]");
                }
            }
            Type::Pointer { pointee, space, is_const } => {
                let _ = write!(out, "{}{} ", if *is_const { "const " } else { "" }, space.keyword());
                self.write_type(out, pointee);
                out.push('*');
            }
            Type::Reference { referee, space, is_const } => {
                let _ = write!(out, "{}{} ", if *is_const { "const " } else { "" }, space.keyword());
                self.write_type(out, referee);
                out.push('&');
            }
            Type::Struct(id) => out.push_str(&self.struct_def(*id).name),
            Type::Enum(id) => out.push_str(&self.enum_def(*id).name),
            Type::Atomic(s) => {
                let _ = write!(out, "atomic_{}", s.name());
            }
            Type::SimdMatrix { elem, rows, cols } => {
                let _ = write!(out, "simdgroup_{}{}x{}", elem.name(), rows, cols);
            }
            Type::BuiltinEnum(e) => out.push_str(e.name()),
            Type::NullPtr => out.push_str("nullptr_t"),
            Type::FnPtr { ret, params } => {
                self.write_type(out, ret);
                out.push_str(" (*)(");
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write_type(out, p);
                }
                out.push(')');
            }
        }
    }
}

/// Display without tables (structs shown by id) for debugging.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tables = TypeTables::default();
        match self {
            Type::Struct(id) => write!(f, "struct#{}", id.0),
            Type::Enum(id) => write!(f, "enum#{}", id.0),
            t if !contains_named(t) => write!(f, "{}", tables.display(t)),
            t => write!(f, "{t:?}"),
        }
    }
}

fn contains_named(t: &Type) -> bool {
    match t {
        Type::Struct(_) | Type::Enum(_) => true,
        Type::Array { elem, .. } => contains_named(elem),
        Type::Pointer { pointee, .. } => contains_named(pointee),
        Type::Reference { referee, .. } => contains_named(referee),
        Type::FnPtr { ret, params } => contains_named(ret) || params.iter().any(contains_named),
        _ => false,
    }
}

/// Builtin type names of MSL (and the MLX/C++ aliases) to types. Vectors are
/// `float4`, `uint3`, ..., `packed_float3`, and the `_t` aliases.
pub fn builtin_type_name(name: &str) -> Option<Type> {
    let scalar = |s: &str| -> Option<Scalar> {
        Some(match s {
            "bool" => Scalar::Bool,
            "char" | "int8_t" => Scalar::Char,
            "uchar" | "uint8_t" => Scalar::UChar,
            "short" | "int16_t" => Scalar::Short,
            "ushort" | "uint16_t" => Scalar::UShort,
            "int" | "int32_t" => Scalar::Int,
            "uint" | "uint32_t" | "unsigned" => Scalar::UInt,
            "long" | "int64_t" | "ptrdiff_t" | "intptr_t" => Scalar::Long,
            // `simd_vote` (from `simd_ballot`) is modelled as its 64-bit mask.
            "ulong" | "uint64_t" | "size_t" | "uintptr_t" | "simd_vote" => Scalar::ULong,
            "half" | "float16_t" => Scalar::Half,
            "bfloat" | "bfloat16_t" => Scalar::BFloat,
            "float" | "float32_t" => Scalar::Float,
            _ => return None,
        })
    };
    if name == "void" {
        return Some(Type::Void);
    }
    if let Some(s) = scalar(name) {
        return Some(Type::Scalar(s));
    }
    // atomic_int, atomic_uint, atomic_float, atomic_bool
    if let Some(rest) = name.strip_prefix("atomic_") {
        return match rest {
            "int" => Some(Type::Atomic(Scalar::Int)),
            "uint" => Some(Type::Atomic(Scalar::UInt)),
            "float" => Some(Type::Atomic(Scalar::Float)),
            "bool" => Some(Type::Atomic(Scalar::Bool)),
            "ulong" => Some(Type::Atomic(Scalar::ULong)),
            _ => None,
        };
    }
    // simdgroup_float8x8, simdgroup_half8x8, simdgroup_bfloat8x8
    if let Some(rest) = name.strip_prefix("simdgroup_") {
        for (prefix, s) in [("float", Scalar::Float), ("half", Scalar::Half), ("bfloat", Scalar::BFloat)] {
            if let Some(dims) = rest.strip_prefix(prefix) {
                if let Some((r, c)) = dims.split_once('x') {
                    let (r, c) = (r.parse::<u8>().ok()?, c.parse::<u8>().ok()?);
                    if r == 8 && c == 8 {
                        return Some(Type::SimdMatrix { elem: s, rows: r, cols: c });
                    }
                }
            }
        }
        return None;
    }
    let (packed, rest) = match name.strip_prefix("packed_") {
        Some(r) => (true, r),
        None => (false, name),
    };
    // Matrices: float2x3, half4x4.
    if !packed {
        for (prefix, s) in [("float", Scalar::Float), ("half", Scalar::Half)] {
            if let Some(dims) = rest.strip_prefix(prefix) {
                let b = dims.as_bytes();
                if b.len() == 3 && b[1] == b'x' && (b'2'..=b'4').contains(&b[0]) && (b'2'..=b'4').contains(&b[2]) {
                    return Some(Type::Matrix { elem: s, cols: b[0] - b'0', rows: b[2] - b'0' });
                }
            }
        }
    }
    // Vectors: name ends in 2, 3 or 4 after a scalar name.
    let last = *rest.as_bytes().last()?;
    if !(b'2'..=b'4').contains(&last) {
        return None;
    }
    let base = &rest[..rest.len() - 1];
    let s = match base {
        "bool" | "char" | "uchar" | "short" | "ushort" | "int" | "uint" | "long" | "ulong" | "half" | "bfloat" | "float" => scalar(base)?,
        _ => return None,
    };
    Some(Type::Vector { elem: s, len: last - b'0', packed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metal_sizes() {
        let t = TypeTables::default();
        let f3 = builtin_type_name("float3").unwrap();
        let pf3 = builtin_type_name("packed_float3").unwrap();
        assert_eq!(t.size_of(&f3), 16);
        assert_eq!(t.align_of(&f3), 16);
        assert_eq!(t.size_of(&pf3), 12);
        assert_eq!(t.align_of(&pf3), 4);
        assert_eq!(t.size_of(&builtin_type_name("half3").unwrap()), 8);
        assert_eq!(t.size_of(&builtin_type_name("size_t").unwrap()), 8);
        assert_eq!(t.size_of(&builtin_type_name("float3x3").unwrap()), 48);
        let (fields, size, align) = t.layout_struct(vec![("p".into(), f3), ("m".into(), Type::FLOAT)]);
        assert_eq!(fields[1].offset, 16);
        assert_eq!((size, align), (32, 16));
    }

    #[test]
    fn usual_arithmetic_conversions() {
        use Scalar::*;
        assert_eq!(Scalar::common(Int, UInt), UInt);
        assert_eq!(Scalar::common(Short, UShort), Int);
        assert_eq!(Scalar::common(Long, UInt), Long);
        assert_eq!(Scalar::common(Int, Float), Float);
        assert_eq!(Scalar::common(Half, Int), Half);
        assert_eq!(Scalar::common(Half, Float), Float);
        assert_eq!(Scalar::common(UChar, Char), Int);
    }

    #[test]
    fn names() {
        assert_eq!(builtin_type_name("uint3"), Some(Type::Vector { elem: Scalar::UInt, len: 3, packed: false }));
        assert_eq!(builtin_type_name("float5"), None);
        assert_eq!(builtin_type_name("simdgroup_half8x8"), Some(Type::SimdMatrix { elem: Scalar::Half, rows: 8, cols: 8 }));
        let t = TypeTables::default();
        let p = Type::pointer(Type::FLOAT, AddressSpace::Device, true);
        assert_eq!(t.display(&p), "const device float*");
    }
}

/// How good an implicit conversion is, for overload ranking (best first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConvRank {
    /// Same type, or only adding `const` / decaying an array.
    Exact,
    /// Integral promotion (`short`→`int`, `bool`→`int`) or `half`→`float`.
    Promotion,
    /// Any other implicit conversion (`int`→`float`, `float`→`int`,
    /// scalar→vector splat, `nullptr`→pointer).
    Conversion,
    /// Through a user-defined conversion operator or converting constructor.
    UserDefined,
}

/// Whether a value of type `from` converts implicitly to `to` (C++ rules as
/// Metal applies them: scalars convert freely, a scalar splats to a vector,
/// vectors never change element type or length implicitly, pointers only
/// gain `const` and never change address space). References are looked
/// through on both sides; binding rules are the checker's business.
pub fn implicit_conversion(from: &Type, to: &Type) -> Option<ConvRank> {
    let (from, to) = (from.strip_ref(), to.strip_ref());
    if from == to {
        return Some(ConvRank::Exact);
    }
    match (from, to) {
        (Type::Scalar(a), Type::Scalar(b)) => Some(scalar_rank(*a, *b)),
        (Type::Enum(_), Type::Scalar(b)) if b.is_integer() || *b == Scalar::Bool || b.is_float() => {
            // Only unscoped enums convert; the checker refuses scoped ones
            // before asking (it knows which is which).
            Some(ConvRank::Promotion)
        }
        (Type::Scalar(_), Type::Vector { .. }) => Some(ConvRank::Conversion),
        (Type::Vector { elem: a, len: la, packed: pa }, Type::Vector { elem: b, len: lb, packed: pb }) => {
            // packed <-> unpacked of the same element type and length convert.
            if a == b && la == lb && pa != pb {
                Some(ConvRank::Exact)
            } else {
                None
            }
        }
        (Type::NullPtr, Type::Pointer { .. } | Type::FnPtr { .. }) => Some(ConvRank::Conversion),
        (Type::Pointer { pointee: pa, space: sa, is_const: ca }, Type::Pointer { pointee: pb, space: sb, is_const: cb }) => {
            // `constant` memory is read-only whatever the pointer says, so
            // `constant T*` and `constant const T*` are the same thing.
            if sa != sb || (*ca && !*cb && *sa != AddressSpace::Constant) {
                return None;
            }
            if pa == pb {
                return Some(ConvRank::Exact);
            }
            if **pb == Type::Void {
                return Some(ConvRank::Conversion);
            }
            None
        }
        (Type::Array { elem, .. }, Type::Pointer { pointee, .. }) if elem == pointee => Some(ConvRank::Exact),
        (Type::Pointer { .. }, Type::Scalar(Scalar::Bool)) => Some(ConvRank::Conversion),
        _ => None,
    }
}

fn scalar_rank(a: Scalar, b: Scalar) -> ConvRank {
    if a == b {
        ConvRank::Exact
    } else if (a.is_integer() || a == Scalar::Bool) && a.rank() < 3 && b == Scalar::Int
        || matches!(a, Scalar::Half | Scalar::BFloat) && b == Scalar::Float
    {
        ConvRank::Promotion
    } else {
        ConvRank::Conversion
    }
}

#[cfg(test)]
mod conv_tests {
    use super::*;

    #[test]
    fn conversions() {
        let f4 = Type::vector(Scalar::Float, 4);
        let f3 = Type::vector(Scalar::Float, 3);
        assert_eq!(implicit_conversion(&Type::FLOAT, &f4), Some(ConvRank::Conversion));
        assert_eq!(implicit_conversion(&f3, &f4), None);
        assert_eq!(implicit_conversion(&f4, &Type::FLOAT), None);
        assert_eq!(implicit_conversion(&Type::Scalar(Scalar::Short), &Type::INT), Some(ConvRank::Promotion));
        assert_eq!(implicit_conversion(&Type::FLOAT, &Type::INT), Some(ConvRank::Conversion));
        let dp = Type::pointer(Type::FLOAT, AddressSpace::Device, false);
        let dcp = Type::pointer(Type::FLOAT, AddressSpace::Device, true);
        let tp = Type::pointer(Type::FLOAT, AddressSpace::Threadgroup, false);
        assert_eq!(implicit_conversion(&dp, &dcp), Some(ConvRank::Exact));
        assert_eq!(implicit_conversion(&dcp, &dp), None);
        assert_eq!(implicit_conversion(&tp, &dp), None);
    }
}
