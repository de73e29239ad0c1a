//! The catalogue of lint checks: every finding names one, by a stable id that CI tools key
//! on (SARIF rule ids, `--format github` titles, the JSON `check` field). Each check has one
//! severity, a help text, and a note of how far the JSON Schema (`protocol schema`) can
//! express it. Ids are never renamed or reused; a retired check keeps its id out of use.
//! Retired: `flow-mode-unsupported` (every mode the linter recognises now lints).

use serde::{Serialize, Serializer};

use super::Severity;

/// How much of a check the JSON Schema of `spec.json` expresses (so editors flag it too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaCoverage {
    /// The schema rejects every spec this check reports.
    Full,
    /// The schema rejects the cases it can express; the rest (said here) need the linter.
    Partial(&'static str),
    /// Beyond JSON Schema (said why); only the linter reports it.
    Beyond(&'static str),
    /// A warning: the schema accepts what it reports (warnings never fail an editor).
    Warning,
}

macro_rules! checks {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, $severity:ident, $schema:expr, $help:literal; )*) => {
        /// One lint check (see the module doc). `Check::ALL` lists them in document order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Check {
            $( $(#[$doc])* $variant, )*
        }

        impl Check {
            pub const ALL: &'static [Check] = &[$(Check::$variant),*];

            /// The stable id, e.g. `field-type-unknown`.
            pub fn id(self) -> &'static str {
                match self { $(Check::$variant => $id,)* }
            }

            /// Every finding of this check has this severity.
            pub fn severity(self) -> Severity {
                match self { $(Check::$variant => Severity::$severity,)* }
            }

            /// What the check is about and how to fix it, in one or two sentences.
            pub fn help(self) -> &'static str {
                match self { $(Check::$variant => $help,)* }
            }

            /// How far the JSON Schema expresses this check.
            pub fn schema_coverage(self) -> SchemaCoverage {
                match self { $(Check::$variant => $schema,)* }
            }
        }
    };
}

use SchemaCoverage::{Beyond, Full, Partial, Warning as Warns};

const RELATION: &str = "compares two values of the spec";
const CROSS_REFERENCE: &str = "refers to another part of the spec by name";
const INTEGER_LITERAL: &str =
    "`5.0` where an integer is needed: JSON Schema's integer type accepts it, Python does not";

checks! {
    // Reading the file.
    Unreadable = "unreadable", Error, Beyond("the file cannot be read"),
        "The file cannot be read (missing permission, or not a regular file).";
    InvalidJson = "invalid-json", Error, Beyond("the file is not JSON a spec may use"),
        "The file is not JSON as Python's json module reads it, or uses what a spec may not: NaN or Infinity, nesting deeper than 128 levels, more than 8 MiB, a byte order mark.";
    NotAnObject = "spec-not-object", Error, Full,
        "The top level of a spec must be a JSON object.";
    ContractUnreadable = "contract-unreadable", Error, Beyond("a gap in the linter"),
        "The spec passes every other check, but the typed contract cannot be built from it; please report it, this is a gap in the linter.";
    Options = "options-invalid", Error, Beyond("about --options, not the spec"),
        "The options given with --options do not fit the spec's parameters.";

    // Top level.
    UnknownKey = "unknown-key", Warning, Warns,
        "A key this section does not define; it is ignored (usually a typo of a known key).";
    Name = "name-invalid", Error, Full,
        "`name` is required: the protocol's display name, a non-blank string.";
    SpecVersion = "spec-version-unsupported", Error, Full,
        "`spec_version` must be \"1.0\" (or absent, or a falsy value, which means \"1.0\").";
    SpecVersionImplicit = "spec-version-implicit", Warning, Warns,
        "A falsy `spec_version` is read as \"1.0\"; write \"1.0\" out.";
    SectionType = "section-type", Warning, Warns,
        "`description`, `type` and `family` should be strings; `tags`, `capabilities` and `choices` arrays of strings.";

    // Messages.
    Messages = "messages-invalid", Error, Full,
        "`messages` is required: a non-empty array of message schemas.";
    MessageNotObject = "message-not-object", Error, Full,
        "Each entry of `messages` must be a message schema object.";
    MessageName = "message-name-invalid", Error, Full,
        "Each message needs a `name`: a non-empty string.";
    MessageNameDuplicate = "message-name-duplicate", Error, Beyond("uniqueness of one key across array items"),
        "Two messages share a name; names must be unique.";
    MessageDirection = "message-direction-invalid", Error, Full,
        "Each message needs a `direction`: host_to_guest, guest_to_host or both.";
    MessageFields = "message-fields-invalid", Error, Full,
        "Each message needs `fields`: an object declaring at least one field schema.";
    DirectionUncovered = "direction-uncovered", Error, Full,
        "Some message must be able to travel each way (guest_to_host and host_to_guest; `both` counts for either).";
    FieldNotObject = "field-schema-not-object", Error, Full,
        "A field schema must be an object.";
    FieldType = "field-type-unknown", Error, Full,
        "A field schema needs a `type` naming one of the 14 field types.";
    RequiredNotBoolean = "required-not-boolean", Error, Full,
        "`required` must be true or false (only a literal true makes a field required).";
    ArrayItems = "array-items-invalid", Error, Full,
        "An array field needs `items`, the schema of each element, and that schema may not be an array (no nested arrays).";
    JsonContainer = "json-container-invalid", Error, Full,
        "A json field's `container` is any, object or array.";
    EnumValues = "enum-values-invalid", Error, Full,
        "An enum needs `values`: a non-empty array of strings.";
    EnumValueDuplicate = "enum-value-duplicate", Warning, Warns,
        "An enum lists the same value twice.";
    Bounds = "bounds-invalid", Error, Partial(INTEGER_LITERAL),
        "`min`/`max` must be numbers; `min_items`/`max_items` non-negative integers.";
    BoundsInverted = "bounds-inverted", Error, Beyond(RELATION),
        "The lower bound is greater than the upper bound, so nothing is accepted.";
    SizeLimit = "size-limit-invalid", Error, Partial(INTEGER_LITERAL),
        "`max_length` and `max_total_bytes` must be positive integers.";
    ActionMissing = "action-missing", Error, Full,
        "Frames are matched to their schema by `action`, so every message declares an `action` field.";
    ActionNotEnum = "action-not-enum", Error, Full,
        "The `action` field must be of type enum.";
    ActionNotRequired = "action-not-required", Warning, Warns,
        "The `action` field should be `required: true`: a frame without an action matches no schema.";
    ActionOwnName = "action-own-name", Warning, Warns,
        "The `action` enum should contain the message's own name.";
    ActionAmbiguous = "action-ambiguous", Error, Beyond(CROSS_REFERENCE),
        "Two messages declare the same action value in an overlapping direction, so a frame with it matches both.";

    // Flow.
    Flow = "flow-invalid", Error, Full,
        "`flow` must be an object (or null).";
    FlowModeUnknown = "flow-mode-unknown", Error, Full,
        "`flow.mode` must be a string naming a flow mode this linter knows.";
    Phases = "phases-invalid", Error, Full,
        "`flow.phases` must be an array.";
    PhaseNotObject = "phase-not-object", Warning, Warns,
        "A phase should be an object.";
    PhaseRepeat = "phase-repeat-invalid", Error, Full,
        "A phase's `repeat` is best_of, total_rounds or until game_over.";
    PhaseRepeatParameter = "phase-repeat-parameter-missing", Error, Full,
        "A phase repeating by best_of or total_rounds needs a parameter of that name.";
    Exchange = "exchange-invalid", Error, Full,
        "A phase's `exchange` is an array of {message, direction} objects, each naming its message.";
    ExchangeMessageUndeclared = "exchange-message-undeclared", Error, Beyond(CROSS_REFERENCE),
        "An exchange step names a message the spec does not declare.";
    ExchangeDirection = "exchange-direction-invalid", Error, Full,
        "An exchange step's `direction` is host_to_guest, guest_to_host or both.";
    ExchangeDirectionMismatch = "exchange-direction-mismatch", Error, Beyond(CROSS_REFERENCE),
        "An exchange step's direction does not fit the direction its message declares.";
    EngineMessageMissing = "engine-message-missing", Error, Full,
        "The flow mode's engine builds a frame with this action itself; declare a message that accepts it in that direction.";
    EngineFieldUndeclared = "engine-field-undeclared", Error, Partial("the reveal's value field, which `flow.round.value_field` names"),
        "The engine sends this field in a frame it builds, so the message must declare it.";
    EngineFieldRequired = "engine-field-required", Error, Partial("a reveal's fields, which depend on `flow.round.value_field`"),
        "A field is required, but the engine never sends it in the frame it builds, so its own frame would fail.";
    MentalPokerMessage = "mental-poker-message-missing", Error, Full,
        "mental_poker needs each of its twelve messages by name.";
    Round = "round-invalid", Error, Full,
        "simultaneous_round needs `flow.round`, an object with non-empty `value_field` and `value_type_ref` strings.";
    ValueTypeRefForm = "value-type-ref-form", Error, Full,
        "`flow.round.value_type_ref` has the form <message>.fields.<field>.";
    ValueTypeRefUnresolved = "value-type-ref-unresolved", Error, Beyond(CROSS_REFERENCE),
        "`flow.round.value_type_ref` names a message or field the spec does not declare.";
    ValueTypeRefMismatch = "value-type-ref-mismatch", Warning, Warns,
        "`flow.round.value_type_ref` refers to another field than `value_field`.";
    JudgedFields = "judged-fields-invalid", Error, Full,
        "`flow.round.judged_fields` is a non-empty array of field names.";
    JudgedFieldUnknown = "judged-field-unknown", Error, Beyond(CROSS_REFERENCE),
        "A judged field is not a field of the round-result message.";
    JudgedFieldDuplicate = "judged-field-duplicate", Warning, Warns,
        "`flow.round.judged_fields` lists a field twice.";
    JudgedFieldsUnused = "judged-fields-unused", Warning, Warns,
        "`flow.round.judged_fields` is only read by the shadow judge, and `shadow_judge` is not true.";
    ShadowJudgeNothingToCompare = "shadow-judge-nothing-to-compare", Error, Beyond("finding the round-result message takes the linter's rule"),
        "A shadow judge needs round-result fields to compare: a single round-result message with fields besides the commit machinery, or `flow.round.judged_fields`.";
    FreeEndWhen = "free-end-when", Warning, Warns,
        "free mode should say `end_when: \"either_ends\"` (a free session always ends when either side ends).";
    FreeEndWhenType = "free-end-when-invalid", Error, Full,
        "free mode's `flow.end_when` must be a string.";
    GroupSection = "group-invalid", Error, Full,
        "authoritative_group needs `flow.group`, an object saying the room's seats, start and recovery.";
    GroupUnknownField = "group-unknown-field", Error, Full,
        "`flow.group` and its `peer_channels` hold only the keys they define: every client must read a room alike.";
    GroupParticipants = "group-participants-invalid", Error, Partial(INTEGER_LITERAL),
        "`flow.group.min_participants` and `max_participants` are required integers from 2 to 32.";
    GroupParticipantsInverted = "group-participants-inverted", Error, Beyond(RELATION),
        "`flow.group.min_participants` is above `max_participants`.";
    GroupPolicy = "group-policy-invalid", Error, Full,
        "`flow.group` needs `allow_late_join` true or false, `recovery_mode` exact, restart_round or abort, and `start_policy` min_ready, full or fixed_full.";
    GroupLimit = "group-limit-invalid", Error, Partial(INTEGER_LITERAL),
        "When given, `checkpoint_every_events` is an integer from 1 to 256, `max_action_bytes` from 256 to 65536, `max_events_per_action` from 1 to 256.";
    PeerChannels = "peer-channels-invalid", Error, Partial(INTEGER_LITERAL),
        "`flow.group.peer_channels` is an object with `enabled` true or false; disabled it holds nothing else; enabled it needs `routing` all_members or hook and 1 to 16 unique lowercase-slug `channels`, and may set `max_message_bytes` from 256 to 65536.";
    RealtimeSection = "realtime-invalid", Error, Full,
        "authoritative_realtime needs `flow.realtime`, an object with the tick and input settings.";
    RealtimeUnknownField = "realtime-unknown-field", Error, Full,
        "`flow.realtime` holds only the six keys it defines.";
    RealtimeSetting = "realtime-setting-invalid", Error, Partial(INTEGER_LITERAL),
        "`flow.realtime` needs integers `tick_rate_hz` 1-60, `input_delay_ticks` 1-120, `snapshot_every_ticks` 1-60, `max_command_lead_ticks` 1-600, `max_commands_per_frame` 1-1024, and `disconnect_policy` abort or continue.";
    RealtimeLeadBelowDelay = "realtime-lead-below-delay", Error, Beyond(RELATION),
        "`flow.realtime.max_command_lead_ticks` is below `input_delay_ticks`, so no command could arrive in time.";

    // Parameters.
    Parameters = "parameters-invalid", Error, Full,
        "`parameters` is an object of parameter schemas (or null).";
    ParameterNotObject = "parameter-not-object", Error, Full,
        "A parameter schema must be an object.";
    ParameterType = "parameter-type-unknown", Error, Full,
        "A parameter schema needs a `type`: integer, boolean, enum, text, id or table.";
    ParameterDefault = "parameter-default-invalid", Error, Partial("a default against its schema's own bounds, values or columns"),
        "A parameter's `default` does not pass its own schema.";
    Columns = "columns-invalid", Error, Full,
        "A table's `columns` is a non-empty tree of object nodes (with non-empty `fields`) and integer, boolean or enum leaves.";

    // Other sections.
    Decision = "decision-invalid", Error, Partial(INTEGER_LITERAL),
        "`decision` is an object: `mode` auto or manual, `timeout_seconds` a positive integer, `timeout_action` fallback, abort or forfeit.";
    CommitReveal = "commit-reveal-invalid", Error, Partial(INTEGER_LITERAL),
        "`commit_reveal` is an object: `algorithm` \"SHA256\", `nonce_length` 16 to 64, `charset` hex.";
    CommitRevealSpelling = "commit-reveal-algorithm-spelling", Warning, Warns,
        "Write the commitment algorithm as \"SHA256\".";
    Timing = "timing-invalid", Error, Partial(INTEGER_LITERAL),
        "`timing` is null or an object with `mode` simultaneous, sequential or none, and non-negative integer think seconds.";
    TimingInverted = "timing-inverted", Error, Beyond(RELATION),
        "`timing.max_think_seconds` is below `timing.min_think_seconds`.";
    ShadowJudge = "shadow-judge-invalid", Error, Full,
        "`shadow_judge` is a boolean when present.";
    ShadowJudgeUnused = "shadow-judge-unused", Warning, Warns,
        "Only simultaneous_round uses the shadow judge; it has no effect here.";
}

impl Serialize for Check {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_warnings_are_never_schema_errors() {
        let mut ids: Vec<&str> = Check::ALL.iter().map(|c| c.id()).collect();
        for id in &ids {
            assert!(
                id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{id}"
            );
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Check::ALL.len(), "duplicate check id");
        for check in Check::ALL {
            let warns = check.schema_coverage() == SchemaCoverage::Warning;
            assert_eq!(warns, check.severity() == Severity::Warning, "{check}");
        }
    }

    #[test]
    fn docs_list_every_check_with_its_severity() {
        let docs = include_str!("../../../docs/spec.md");
        for check in Check::ALL {
            let severity = match check.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let row = format!("| `{}` | {severity} | {} |", check.id(), check.help());
            assert!(docs.contains(&row), "docs/spec.md lacks the row {row}");
        }
    }
}
