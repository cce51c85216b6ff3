//! How `run` and `mlx` end: the exit code, and for a run that could not
//! start, the error (in the `--json` document too). Findings turn into
//! diagnostics and JSON through `gpu::Finding` itself.

use crate::EXIT_CANNOT_START;

/// The command's exit code; an error means it could not start: printed on
/// stderr, and as the `error` of an otherwise empty JSON document with `--json`.
pub fn exit_code(result: Result<u8, String>, json: bool) -> u8 {
    match result {
        Ok(code) => code,
        Err(msg) => {
            if json {
                println!("{}", serde_json::json!({"diagnostics": [], "findings": [], "outputs": {}, "error": msg}));
            }
            eprintln!("error: {msg}");
            EXIT_CANNOT_START
        }
    }
}
