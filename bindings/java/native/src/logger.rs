//! A Java `org.iq80.leveldb.Logger` as the engine's info log (`Options.logger`): it receives
//! the messages the engine would otherwise write to the database's `LOG` file.
//!
//! The engine logs from the opening thread, from writers and from its background threads, so
//! the logger is called from any of them (see `attach`). A logger that throws loses that
//! message only: the exception is printed to `stderr` (the engine cannot carry it anywhere).

use jni::objects::JString;
use jni::refs::Global;
use jni::Env;
use strata::Logger;

use crate::attach;
use crate::errors::Error;
use crate::java::JavaLoggerRef;

/// Thread safety: `Send + Sync`; each call attaches to the JVM.
pub(crate) struct JavaLogger {
    target: Global<JavaLoggerRef<'static>>,
}

impl JavaLogger {
    pub(crate) fn new(env: &mut Env<'_>, target: &JavaLoggerRef<'_>) -> Result<JavaLogger, Error> {
        Ok(JavaLogger {
            target: env.new_global_ref(target)?,
        })
    }
}

impl Logger for JavaLogger {
    fn log(&self, message: &str) {
        let logged = attach::with_env(|env| {
            let message = JString::from_str(env, message)?;
            self.target.log(env, &message)
        });
        match logged {
            Ok(()) => {}
            Err(jni::errors::Error::CaughtJavaException { name, msg, .. }) => {
                eprintln!("strata: the Java logger threw {name}: {msg}");
            }
            Err(e) => eprintln!("strata: the Java logger failed: {e}"),
        }
    }
}
