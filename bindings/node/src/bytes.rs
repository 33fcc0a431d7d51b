//! Keys and values across the boundary. In: a `Uint8Array` (a `Buffer` is one) or a string,
//! copied into Rust at once, so JavaScript may reuse its buffer as soon as the call returns.
//! Out: a `Buffer`, or a string when the caller's encoding is `utf8` (bytes that are not UTF-8
//! are replaced by U+FFFD, as `Buffer#toString` does). A batch of string operations may also come
//! as one string of UTF-16 code units (see [`crate::batch`]), encoded here as Node-API would.

use napi::bindgen_prelude::{BufferSlice, Either, Env, ToNapiValue, Uint8ArraySlice, Unknown};

/// A key or value as JavaScript passes it.
pub(crate) type Data<'a> = Either<Uint8ArraySlice<'a>, String>;

/// The bytes of `data`.
pub(crate) fn to_vec(data: Data<'_>) -> Vec<u8> {
    match data {
        Either::A(view) => view.to_vec(),
        Either::B(text) => text.into_bytes(),
    }
}

/// Appends the UTF-8 encoding of the UTF-16 `units` of a JavaScript string to `out`, as Node-API
/// encodes a string (a lone surrogate becomes U+FFFD).
pub(crate) fn push_utf16_as_utf8(units: &[u16], out: &mut Vec<u8>) {
    if units.iter().all(|&unit| unit < 0x80) {
        // ASCII, the common case: a unit is its byte.
        out.extend(units.iter().map(|&unit| unit as u8));
        return;
    }
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(c) if c.is_ascii() => out.push(c as u8),
            decoded => {
                let c = decoded.unwrap_or(char::REPLACEMENT_CHARACTER);
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
        }
    }
}

/// `bytes` as a JavaScript string or `Buffer`.
pub(crate) fn to_js<'a>(env: &'a Env, bytes: &[u8], as_string: bool) -> napi::Result<Unknown<'a>> {
    if as_string {
        String::from_utf8_lossy(bytes)
            .into_owned()
            .into_unknown(env)
    } else {
        BufferSlice::copy_from(env, bytes)?.into_unknown(env)
    }
}

/// `Some(bytes)` as [`to_js`] gives it, `None` as `undefined`.
pub(crate) fn optional_to_js<'a>(
    env: &'a Env,
    bytes: Option<&[u8]>,
    as_string: bool,
) -> napi::Result<Unknown<'a>> {
    match bytes {
        Some(bytes) => to_js(env, bytes, as_string),
        None => ().into_unknown(env),
    }
}
