//! Real LevelDB 1.23 through its C API. PLACEHOLDER
