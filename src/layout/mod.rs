//! The one owner of what this project keeps on disk: where each file lives ([`dirs`]: the
//! data dir, a session dir, an engine dir, one method per file), how files in a data dir are
//! written ([`files`]: private directories, atomic replacement, JSON-lines appends) and how
//! files that others append to are read ([`jsonl`]: bounded, line by line, never poisoned by
//! one bad line).

pub mod dirs;
pub mod files;
pub mod jsonl;

pub use dirs::{DataDir, EngineDir, SessionDir, claim_dir};
pub use files::{
    append_json_line, append_line, create_private_dir, create_private_file, end_torn_line,
    ensure_private_data_dir, ensure_private_dir, keep_new_files_private, lock_beside, open_append,
    write_atomic, write_atomic_synced,
};
pub use jsonl::{Skip, Tail, TailLine};
