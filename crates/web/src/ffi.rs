//! The WebAssembly interface: a plain C ABI, so the page needs no generated
//! glue. The page writes a UTF-8 request into memory it got from
//! [`mp_alloc`], calls [`mp_request`] (which frees it), and reads the
//! answer's bytes at [`mp_answer_ptr`] (length: `mp_request`'s result).
//!
//! A panic traps the module (wasm has no unwinding); the hook first keeps
//! its message, which the page reads with [`mp_panic_ptr`] /
//! [`mp_panic_len`] before it starts a fresh module.

use std::cell::RefCell;
use std::sync::Mutex;

thread_local! {
    static ANSWER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

static PANIC: Mutex<String> = Mutex::new(String::new());

/// `len` bytes for a request.
#[no_mangle]
pub extern "C" fn mp_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len.max(1));
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Answer the request of `len` bytes at `ptr` (from [`mp_alloc`] with the
/// same `len`; freed here). Returns the answer's length.
///
/// # Safety
/// `ptr` must come from `mp_alloc(len)` and hold `len` initialized bytes.
#[no_mangle]
pub unsafe extern "C" fn mp_request(ptr: *mut u8, len: usize) -> usize {
    install_panic_hook();
    // SAFETY: the caller's contract: allocated by mp_alloc(len), filled.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len, len.max(1)) };
    let answer = match String::from_utf8(bytes) {
        Ok(text) => crate::handle(&text),
        Err(_) => serde_json::json!({ "error": "bad request: not UTF-8" }).to_string(),
    };
    ANSWER.with(|a| {
        let mut a = a.borrow_mut();
        *a = answer.into_bytes();
        a.len()
    })
}

/// Where the last answer's bytes are (valid until the next request).
#[no_mangle]
pub extern "C" fn mp_answer_ptr() -> *const u8 {
    ANSWER.with(|a| a.borrow().as_ptr())
}

/// The message of the panic that trapped the module (empty if none).
#[no_mangle]
pub extern "C" fn mp_panic_ptr() -> *const u8 {
    PANIC.lock().map(|m| m.as_ptr()).unwrap_or(std::ptr::null())
}

#[no_mangle]
pub extern "C" fn mp_panic_len() -> usize {
    PANIC.lock().map(|m| m.len()).unwrap_or(0)
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            if let Ok(mut m) = PANIC.lock() {
                *m = info.to_string();
            }
        }))
    });
}
