//! The Java types native code calls into, bound once (class and method IDs cached by `jni`).
//!
//! `org.iq80.leveldb` is leveldb-api 0.12; `io.github.stratakv.StrataOptions` is this binding's
//! `Options` subclass for what the API has no field for.

use jni::bind_java_type;

bind_java_type! {
    pub(crate) DbException => org.iq80.leveldb.DBException,
    is_instance_of = { JThrowable },
    constructors {
        fn new(message: JString, cause: JThrowable),
    },
}

bind_java_type! {
    pub(crate) JavaComparatorRef => org.iq80.leveldb.DBComparator,
    methods {
        fn name() -> JString,
        fn compare(a: JObject, b: JObject) -> jint,
        fn find_shortest_separator(start: jbyte[], limit: jbyte[]) -> jbyte[],
        fn find_short_successor(key: jbyte[]) -> jbyte[],
    },
}

bind_java_type! {
    pub(crate) JavaLoggerRef => org.iq80.leveldb.Logger,
    methods {
        fn log(message: JString),
    },
}

bind_java_type! {
    pub(crate) CompressionTypeRef => org.iq80.leveldb.CompressionType,
    methods {
        fn persistent_id() -> jint,
    },
}

bind_java_type! {
    pub(crate) OptionsRef => org.iq80.leveldb.Options,
    type_map = {
        JavaComparatorRef => org.iq80.leveldb.DBComparator,
        JavaLoggerRef => org.iq80.leveldb.Logger,
        CompressionTypeRef => org.iq80.leveldb.CompressionType,
    },
    methods {
        fn create_if_missing() -> jboolean,
        fn error_if_exists() -> jboolean,
        fn write_buffer_size() -> jint,
        fn max_open_files() -> jint,
        fn block_restart_interval() -> jint,
        fn block_size() -> jint,
        fn compression_type() -> CompressionTypeRef,
        fn verify_checksums() -> jboolean,
        fn cache_size() -> jlong,
        fn comparator() -> JavaComparatorRef,
        fn logger() -> JavaLoggerRef,
        fn paranoid_checks() -> jboolean,
    },
}

bind_java_type! {
    pub(crate) StrataOptionsRef => io.github.stratakv.StrataOptions,
    methods {
        fn bloom_filter_bits_per_key() -> jint,
        fn read_only() -> jboolean,
        fn value_separation() -> jint,
    },
}
