//! A thread's scratch buffer (`Scratch.java`): a direct `ByteBuffer` through which the hot native
//! methods take keys and values and leave their answers, so that they make no JNI function
//! call.
//!
//! Contract (kept by the Java side): a method gets the buffer's address and capacity from the
//! `Scratch` of the calling thread, which stays reachable during the call; only that thread
//! uses it, and only during the call. Offsets and lengths coming with it are checked here, so
//! a wrong one is an error, never an access outside the buffer.

use jni::objects::{JByteBuffer, JClass};
use jni::sys::{jint, jlong};
use jni::{jni_mangle, EnvUnowned};

use crate::errors::{run, Error};

/// A scratch buffer during one native call.
pub(crate) struct Scratch {
    address: *mut u8,
    capacity: usize,
}

impl Scratch {
    /// The scratch at `address` holding `capacity` bytes.
    ///
    /// # Safety
    /// `address` and `capacity` are those of the calling thread's `Scratch` (the contract
    /// above), and the returned value is dropped before the native call returns.
    pub(crate) unsafe fn new(address: jlong, capacity: jint) -> Result<Scratch, Error> {
        let capacity = usize::try_from(capacity)
            .map_err(|_| Error::Misuse(format!("a scratch of {capacity} bytes")))?;
        if address == 0 {
            return Err(Error::Misuse("a null scratch buffer".to_owned()));
        }
        Ok(Scratch {
            address: address as *mut u8,
            capacity,
        })
    }

    /// The `len` bytes at `offset`.
    pub(crate) fn get(&self, offset: usize, len: jint) -> Result<&[u8], Error> {
        let len = usize::try_from(len).ok();
        match len.and_then(|len| Some(len).zip(offset.checked_add(len))) {
            Some((len, end)) if end <= self.capacity => {
                // SAFETY: within the buffer (checked), which no one else touches during the
                // call (the contract).
                Ok(unsafe { std::slice::from_raw_parts(self.address.add(offset), len) })
            }
            _ => Err(Error::Misuse(format!(
                "{len:?} bytes at {offset} do not fit a scratch of {} bytes",
                self.capacity
            ))),
        }
    }

    /// The `len` bytes at the start, and the rest of the buffer, after them, as a scratch of
    /// its own: for an answer written while the bytes are still read.
    pub(crate) fn split(&mut self, len: jint) -> Result<(&[u8], Scratch), Error> {
        let head = self.get(0, len)?;
        let rest = Scratch {
            // SAFETY: `head` lies within the buffer (checked by `get`), so its end does too.
            address: unsafe { self.address.add(head.len()) },
            capacity: self.capacity - head.len(),
        };
        Ok((head, rest))
    }

    /// Copies `parts` in one after another from the start; false, copying nothing, when they
    /// do not fit.
    pub(crate) fn put(&mut self, parts: &[&[u8]]) -> bool {
        self.put_at(0, parts).is_some()
    }

    /// Copies `parts` in one after another from offset `at`, and returns the offset after
    /// them; `None`, copying nothing, when they do not fit.
    pub(crate) fn put_at(&mut self, at: usize, parts: &[&[u8]]) -> Option<usize> {
        let end = parts
            .iter()
            .map(|part| part.len())
            .try_fold(at, usize::checked_add)
            .filter(|&end| end <= self.capacity)?;
        let mut at = at;
        for part in parts {
            // SAFETY: the parts fit the buffer (checked) and come from engine memory, not from
            // the buffer; no one else touches it during the call (the contract).
            unsafe {
                std::ptr::copy_nonoverlapping(part.as_ptr(), self.address.add(at), part.len())
            };
            at += part.len();
        }
        Some(end)
    }
}

#[jni_mangle("io.github.stratakv.Scratch")]
pub fn address<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    buffer: JByteBuffer<'local>,
) -> jlong {
    run(&mut env, |env| {
        let address = env.get_direct_buffer_address(&buffer)?;
        Ok(address as jlong)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_the_key_and_the_answer_apart_at_every_size() {
        let mut buffer = vec![0u8; 8];
        for key_len in 0..=8 {
            buffer
                .iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b = i as u8);
            // Taken after the buffer's last change through a reference of its own.
            let address = buffer.as_mut_ptr() as jlong;
            // SAFETY: `buffer` outlives `scratch`, and nothing else touches it meanwhile.
            let mut scratch = unsafe { Scratch::new(address, 8) }.unwrap();
            let (key, mut rest) = scratch.split(key_len).unwrap();
            let room = 8 - key_len as usize;
            assert!(!rest.put(&[&vec![0xff; room + 1]]), "{key_len}");
            assert!(rest.put(&[&vec![0xee; room]]), "{key_len}");
            let want: Vec<u8> = (0..key_len as u8).collect();
            assert_eq!(key, &want[..], "{key_len}");
            let mut whole = want.clone();
            whole.resize(8, 0xee);
            assert_eq!(buffer, whole, "{key_len}");
        }
        // SAFETY: as above.
        let mut scratch = unsafe { Scratch::new(buffer.as_mut_ptr() as jlong, 8) }.unwrap();
        assert!(scratch.split(9).is_err());
        assert!(scratch.split(-1).is_err());
    }
}
