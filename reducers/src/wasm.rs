//! The WebAssembly ABI of [`crate::reduce`]: plain `extern "C"` exports (no
//! wasm-bindgen), compiled only for `target_arch = "wasm32"`, used by
//! `lib/reducers-wasm.js`.
//!
//! Strings cross as UTF-8 bytes in the module's linear memory:
//! 1. the caller gets a buffer per input with [`alloc`]`(len)`, writes the
//!    bytes of the state JSON and of the action JSON into them;
//! 2. [`reduce`]`(scope, state_ptr, state_len, action_ptr, action_len)`
//!    (`scope`: `0` session, `1` chat) returns `ptr << 32 | len` of the
//!    answer, a UTF-8 JSON object the caller owns;
//! 3. the caller reads the answer, then frees the answer and both inputs
//!    with [`dealloc`]`(ptr, len)` (`reduce` frees nothing).
//!
//! The answer is the crate's result object `{"state", "outcome", "error"?}`
//! or, when an input cannot be used (not UTF-8, not JSON of its type, an
//! unknown scope), `{"inputError": "<state|action|scope>: <why>"}`; the
//! result object never has an `inputError` member. A panic traps (the
//! `wasm32-unknown-unknown` target aborts) and surfaces in JavaScript as a
//! `WebAssembly.RuntimeError`.

use std::alloc::{alloc as allocate, dealloc as deallocate, Layout};
use std::ptr::NonNull;

use crate::{InputError, Scope};

/// The layout of a byte buffer of `len` bytes (`len` > 0); a length no
/// layout holds (over `isize::MAX`) traps, as a failed allocation does.
fn bytes(len: usize) -> Layout {
    match Layout::array::<u8>(len) {
        Ok(layout) => layout,
        Err(_) => std::process::abort(),
    }
}

/// Allocates `len` bytes in linear memory and returns their address (a
/// dangling, non-zero address when `len` is 0). Free it with [`dealloc`]
/// and the same `len`. Traps when memory cannot grow.
#[no_mangle]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    if len == 0 {
        return NonNull::<u8>::dangling().as_ptr();
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { allocate(bytes(len)) };
    if ptr.is_null() {
        std::alloc::handle_alloc_error(bytes(len));
    }
    ptr
}

/// Frees `len` bytes at `ptr`, as returned by [`alloc`] or in the answer of
/// [`reduce`].
///
/// # Safety
/// `ptr` and `len` must be an allocation of this module not yet freed.
#[no_mangle]
pub unsafe extern "C" fn dealloc(ptr: *mut u8, len: usize) {
    if len != 0 {
        // SAFETY: the caller passes back an allocation made with this layout.
        unsafe { deallocate(ptr, bytes(len)) }
    }
}

/// Runs [`crate::reduce`] on the UTF-8 JSON at `state_ptr`/`state_len`
/// and `action_ptr`/`action_len`; `scope` is `0` (session) or `1` (chat).
/// Returns the answer's `ptr << 32 | len` (see the module doc).
///
/// # Safety
/// Both inputs must be readable buffers of this module's memory of the
/// given lengths (from [`alloc`]).
#[no_mangle]
pub unsafe extern "C" fn reduce(
    scope: u32,
    state_ptr: *const u8,
    state_len: usize,
    action_ptr: *const u8,
    action_len: usize,
) -> u64 {
    // SAFETY: the caller's contract.
    let (state, action) = unsafe {
        (
            text("state", state_ptr, state_len),
            text("action", action_ptr, action_len),
        )
    };
    let answer = match (scope_of(scope), state, action) {
        (Ok(scope), Ok(state), Ok(action)) => crate::reduce(scope, state, action),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => Err(e),
    };
    let json = answer.unwrap_or_else(|e| serde_json::json!({ "inputError": e.0 }).to_string());
    hand_over(json.into_bytes())
}

/// The scope numbered `n` (`0` session, `1` chat).
fn scope_of(n: u32) -> Result<Scope, InputError> {
    match n {
        0 => Ok(Scope::Session),
        1 => Ok(Scope::Chat),
        other => Err(InputError(format!(
            "scope: {other} is neither 0 (session) nor 1 (chat)"
        ))),
    }
}

/// The UTF-8 text of `len` bytes at `ptr`, or an error naming `what`.
///
/// # Safety
/// `ptr` must be readable for `len` bytes (any address when `len` is 0).
unsafe fn text<'a>(what: &str, ptr: *const u8, len: usize) -> Result<&'a str, InputError> {
    if len == 0 {
        return Ok("");
    }
    // SAFETY: the caller's contract.
    let raw = unsafe { std::slice::from_raw_parts(ptr, len) };
    std::str::from_utf8(raw).map_err(|e| InputError(format!("{what}: not UTF-8: {e}")))
}

/// Leaves `bytes` to the caller, who frees them with [`dealloc`], and
/// returns their `ptr << 32 | len`.
fn hand_over(bytes: Vec<u8>) -> u64 {
    // A boxed slice's allocation has exactly the layout `alloc(len)` makes.
    let boxed = bytes.into_boxed_slice();
    let len = boxed.len();
    let ptr = Box::into_raw(boxed).cast::<u8>();
    ((ptr as usize as u64) << 32) | len as u64
}
