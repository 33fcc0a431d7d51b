//! Java `byte[]` to bytes and back. Java's arrays are copied: engine calls may block (disk,
//! locks), which a pinned ("critical") array must never do.

use jni::objects::JByteArray;
use jni::Env;

use crate::errors::Error;

/// The bytes of `array`; `what` names it in the error for null ("key", "value", ...).
pub(crate) fn required(
    env: &Env<'_>,
    array: &JByteArray<'_>,
    what: &str,
) -> Result<Vec<u8>, Error> {
    optional(env, array)?.ok_or_else(|| Error::Misuse(format!("{what} must not be null")))
}

/// The bytes of `array`, or `None` for null.
pub(crate) fn optional(env: &Env<'_>, array: &JByteArray<'_>) -> Result<Option<Vec<u8>>, Error> {
    if array.is_null() {
        Ok(None)
    } else {
        Ok(Some(env.convert_byte_array(array)?))
    }
}

/// A new Java `byte[]` holding `bytes`.
pub(crate) fn to_java<'local>(
    env: &mut Env<'local>,
    bytes: &[u8],
) -> Result<JByteArray<'local>, Error> {
    Ok(env.byte_array_from_slice(bytes)?)
}
