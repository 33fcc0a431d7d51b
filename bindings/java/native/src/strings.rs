//! Java `String` arguments as Rust strings.

use jni::objects::JString;
use jni::Env;

use crate::errors::Error;

/// The text of `string`; `what` names it in the error for null ("the path", ...).
pub(crate) fn required(env: &Env<'_>, string: &JString<'_>, what: &str) -> Result<String, Error> {
    if string.is_null() {
        return Err(Error::Misuse(format!("{what} must not be null")));
    }
    Ok(string.try_to_string(env)?)
}
