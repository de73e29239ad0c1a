//! The JSON Schema (2020-12) of `spec.json`, for editors (`"$schema"`) and other tools. It is
//! committed at `schemas/spec.schema.json` and embedded here, so `protocol schema` prints
//! exactly the committed file. It rejects every lint error JSON Schema can express (each
//! check's `SchemaCoverage` says how far) and accepts every spec the linter passes; the
//! `spec` test crate holds the two to that.

/// The schema's text, as committed.
pub const SPEC_JSON_SCHEMA: &str = include_str!("../../schemas/spec.schema.json");
