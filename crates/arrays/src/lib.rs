//! n-d arrays for metal-puzzles: dtypes, strided views, `.npy` I/O,
//! generated buffers for the command line, and numpy/MLX-style printing.

mod array;
mod dtype;
mod npy;
mod parse;
mod records;
mod repr;

pub use array::{checked_nbytes, isclose, row_major_strides, shape_str, Array, Scalar, SplitMix64};
pub use dtype::{DType, ALL_DTYPES};
pub use parse::{parse_shape, parse_value, parse_value_within, MAX_GENERATED_BYTES, MAX_TOTAL_BUFFER_BYTES};
pub use records::{is_record_npy, records_from_npy_bytes};
pub use repr::format_g6;
