//! A JNI environment on any thread, for callbacks into Java (comparators, loggers).
//!
//! Callbacks run on the Java thread that called into the engine (already attached by the JVM)
//! or on one of the engine's own threads (background compaction and its helpers). An engine
//! thread is attached as a *daemon* on its first callback and detached when it exits: a
//! database the application never closed must not keep the JVM from exiting, as an attached
//! non-daemon thread would (the `jni` crate only attaches non-daemon threads).

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

use jni::sys::{JNI_OK, JNI_VERSION_1_8};
use jni::{Env, JavaVM};

thread_local! {
    /// True once this thread is known to be attached (by the JVM or by [`DaemonAttachment`]).
    static ATTACHED: Cell<bool> = const { Cell::new(false) };
    /// This thread's own daemon attachment, detached when the thread exits.
    static DAEMON: Cell<Option<DaemonAttachment>> = const { Cell::new(None) };
}

/// A daemon attachment made here; dropping it (at thread exit) detaches the thread.
struct DaemonAttachment {
    vm: *mut jni::sys::JavaVM,
}

impl Drop for DaemonAttachment {
    fn drop(&mut self) {
        // SAFETY: `vm` is the process's JavaVM (it is never unloaded while the process runs)
        // and this thread attached itself to it; a thread may detach itself once it has no
        // Java frames, which holds at thread exit.
        unsafe {
            ((**self.vm).v1_1.DetachCurrentThread)(self.vm);
        }
    }
}

/// Attaches the current thread as a daemon unless it is attached already.
fn ensure_attached(vm: &JavaVM) -> jni::errors::Result<()> {
    if ATTACHED.get() {
        return Ok(());
    }
    let raw = vm.get_raw();
    let mut env: *mut c_void = ptr::null_mut();
    // SAFETY: `raw` is the live JavaVM; GetEnv and AttachCurrentThreadAsDaemon may be called
    // from any thread and only write the environment pointer we pass.
    let attached_here = unsafe {
        if ((**raw).v1_2.GetEnv)(raw, &mut env, JNI_VERSION_1_8) == JNI_OK {
            false
        } else {
            let status = ((**raw).v1_4.AttachCurrentThreadAsDaemon)(raw, &mut env, ptr::null_mut());
            if status != JNI_OK {
                return Err(jni::errors::Error::JniCall(jni::errors::JniError::Other(
                    status,
                )));
            }
            true
        }
    };
    if attached_here {
        DAEMON.set(Some(DaemonAttachment { vm: raw }));
    }
    ATTACHED.set(true);
    Ok(())
}

/// Runs `f` with a JNI environment on the current thread, in a local frame of its own. A Java
/// exception `f` leaves pending comes back as `Error::CaughtJavaException`.
pub(crate) fn with_env<T>(
    f: impl FnOnce(&mut Env) -> jni::errors::Result<T>,
) -> jni::errors::Result<T> {
    let vm = JavaVM::singleton()?;
    ensure_attached(&vm)?;
    vm.attach_current_thread(f)
}
