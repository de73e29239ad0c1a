//! The JSON Schema of spec.json (`protocol schema`, `schemas/spec.schema.json`) against the
//! linter, through a real JSON Schema validator: every spec the linter passes validates
//! (the reference package's samples, our built-ins, our examples, and thousands of
//! variants of them), every spec the schema rejects the linter rejects too, and every lint
//! error the schema claims to express (`SchemaCoverage::Full`/`Partial`) is rejected by it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use aigenora::spec::lint::SchemaCoverage;
use aigenora::spec::{Check, Severity, lint};
use serde_json::{Value, json};

use crate::support::cli::aigenora;
use crate::support::reference::reference_package_dir;

fn committed_schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/spec.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&committed_schema()).expect("the schema compiles")
}

/// The checks of the lint errors of a spec.
fn lint_errors(spec: &Value) -> BTreeSet<Check> {
    lint(spec)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.check)
        .collect()
}

#[test]
fn protocol_schema_prints_the_committed_file_a_valid_2020_12_schema() {
    let output = aigenora().args(["protocol", "schema"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/spec.schema.json");
    assert_eq!(output.stdout, std::fs::read(path).unwrap());
    let schema = committed_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::meta::validate(&schema).expect("valid against the 2020-12 meta-schema");
}

/// The names the schema lists are the ones the code knows.
#[test]
fn the_schema_names_the_types_and_modes_the_code_knows() {
    let schema = committed_schema();
    let defs = &schema["$defs"];
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_string))
            .collect()
    };
    assert_eq!(
        names(&defs["field"]["properties"]["type"]["enum"]).join(", "),
        aigenora::spec::FieldType::names()
    );
    assert_eq!(
        names(&defs["parameter"]["properties"]["type"]["enum"]).join(", "),
        aigenora::spec::ParameterType::names()
    );
    let linting: Vec<&str> = aigenora::spec::FlowMode::ALL
        .iter()
        .map(|mode| mode.as_str())
        .collect();
    assert_eq!(names(&defs["flow"]["properties"]["mode"]["enum"]), linting);
}

/// Every spec we ship or the reference ships: path and JSON.
fn sample_specs() -> Vec<(PathBuf, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect_specs(&reference_package_dir().join("protocols"), &mut files);
    collect_specs(&root.join("src/protocols"), &mut files);
    collect_specs(&root.join("examples/protocols"), &mut files);
    files
        .into_iter()
        .map(|path| {
            let value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            (path, value)
        })
        .collect()
}

fn collect_specs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_specs(&path, out);
        } else if path.file_name().is_some_and(|name| name == "spec.json") {
            out.push(path);
        }
    }
}

/// Which samples pass is data, not a list: when the linter learns a mode, its samples join.
#[test]
fn samples_the_linter_passes_validate_and_samples_the_schema_rejects_fail_the_linter() {
    let validator = validator();
    let mut passed = 0;
    let mut reference_passed = 0;
    for (path, spec) in sample_specs() {
        let errors = lint_errors(&spec);
        let schema_errors: Vec<String> = validator
            .iter_errors(&spec)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            assert!(
                schema_errors.is_empty(),
                "{} lints clean but the schema rejects it: {schema_errors:?}",
                path.display()
            );
            passed += 1;
            if path.starts_with(reference_package_dir()) {
                reference_passed += 1;
            }
        } else if !schema_errors.is_empty() {
            assert!(!errors.is_empty());
        }
        if !schema_errors.is_empty() {
            assert!(
                !errors.is_empty(),
                "{}: the schema rejects it, the linter does not",
                path.display()
            );
        }
    }
    assert!(
        reference_passed >= 12,
        "the reference's samples of the five seed modes all lint clean (got {reference_passed})"
    );
    assert!(passed >= reference_passed + 8, "and so do ours ({passed})");
}

/// A lint error and the edit that makes it, on a spec that lints clean.
struct Case {
    check: Check,
    base: &'static str,
    edit: fn(&mut Value),
}

fn builtin(alias: &str) -> Value {
    aigenora::protocols::find(alias)
        .unwrap_or_else(|| panic!("no built-in {alias}"))
        .spec()
        .value()
        .clone()
}

fn message<'a>(spec: &'a mut Value, name: &str) -> &'a mut Value {
    spec["messages"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no message {name}"))
}

fn without_message(spec: &mut Value, name: &str) {
    spec["messages"]
        .as_array_mut()
        .unwrap()
        .retain(|m| m["name"] != name);
}

fn set_field(spec: &mut Value, schema: Value) {
    message(spec, "guess")["fields"]["x"] = schema;
}

fn cases() -> Vec<Case> {
    use Check::*;
    let case = |check, base, edit| Case { check, base, edit };
    vec![
        case(NotAnObject, "guess-number", |s| *s = json!([])),
        case(Name, "guess-number", |s| s["name"] = json!(" \t")),
        case(Name, "guess-number", |s| {
            s.as_object_mut().unwrap().remove("name");
        }),
        case(SpecVersion, "guess-number", |s| {
            s["spec_version"] = json!("2.0")
        }),
        case(Messages, "guess-number", |s| s["messages"] = json!([])),
        case(MessageNotObject, "guess-number", |s| {
            s["messages"].as_array_mut().unwrap().push(json!(5))
        }),
        case(MessageName, "guess-number", |s| {
            message(s, "guess")["name"] = json!("")
        }),
        case(MessageDirection, "guess-number", |s| {
            message(s, "guess")["direction"] = json!("sideways")
        }),
        case(MessageFields, "guess-number", |s| {
            message(s, "guess")["fields"] = json!({})
        }),
        case(DirectionUncovered, "guess-number", |s| {
            for m in s["messages"].as_array_mut().unwrap() {
                m["direction"] = json!("guest_to_host");
            }
        }),
        case(FieldNotObject, "guess-number", |s| set_field(s, json!(5))),
        case(FieldType, "guess-number", |s| {
            set_field(s, json!({"type": "number"}))
        }),
        case(FieldType, "guess-number", |s| {
            set_field(s, json!({"min": 1}))
        }),
        case(RequiredNotBoolean, "guess-number", |s| {
            set_field(s, json!({"type": "integer", "required": "yes"}))
        }),
        case(ArrayItems, "guess-number", |s| {
            set_field(s, json!({"type": "array"}))
        }),
        case(ArrayItems, "guess-number", |s| {
            set_field(s, json!({"type": "array", "items": {"type": "array"}}))
        }),
        case(JsonContainer, "guess-number", |s| {
            set_field(s, json!({"type": "json", "container": "map"}))
        }),
        case(EnumValues, "guess-number", |s| {
            set_field(s, json!({"type": "enum", "values": []}))
        }),
        case(EnumValues, "guess-number", |s| {
            set_field(s, json!({"type": "enum", "values": ["a", 2]}))
        }),
        case(Bounds, "guess-number", |s| {
            set_field(s, json!({"type": "integer", "min": "0"}))
        }),
        case(Bounds, "guess-number", |s| {
            set_field(
                s,
                json!({"type": "array", "items": {"type": "hash"}, "max_items": -1}),
            )
        }),
        case(SizeLimit, "guess-number", |s| {
            set_field(s, json!({"type": "text", "max_length": 0}))
        }),
        case(ActionMissing, "guess-number", |s| {
            let fields = message(s, "guess")["fields"].as_object_mut().unwrap();
            fields.remove("action");
            fields.insert("x".into(), json!({"type": "integer"}));
        }),
        case(ActionNotEnum, "guess-number", |s| {
            message(s, "guess")["fields"]["action"]["type"] = json!("text")
        }),
        case(Flow, "guess-number", |s| s["flow"] = json!(5)),
        case(FlowModeUnknown, "guess-number", |s| {
            s["flow"] = json!({"mode": "sequenced_turn"})
        }),
        case(FlowModeUnknown, "guess-number", |s| {
            s["flow"] = json!({"mode": 3})
        }),
        case(GroupSection, "guess-number", |s| {
            s["flow"] = json!({"mode": "authoritative_group"})
        }),
        case(GroupSection, ROOM, |s| s["flow"]["group"] = json!([])),
        case(GroupUnknownField, ROOM, |s| {
            s["flow"]["group"]["seats"] = json!(4)
        }),
        case(GroupUnknownField, ROOM, |s| {
            s["flow"]["group"]["peer_channels"] = json!({"enabled": false, "x": 1})
        }),
        case(GroupParticipants, ROOM, |s| {
            s["flow"]["group"]["max_participants"] = json!(33)
        }),
        case(GroupParticipants, ROOM, |s| {
            s["flow"]["group"]["min_participants"] = json!(true)
        }),
        case(GroupParticipants, ROOM, |s| {
            s["flow"]["group"]
                .as_object_mut()
                .unwrap()
                .remove("min_participants");
        }),
        case(GroupPolicy, ROOM, |s| {
            s["flow"]["group"]["allow_late_join"] = json!(null)
        }),
        case(GroupPolicy, ROOM, |s| {
            s["flow"]["group"]["recovery_mode"] = json!("restart")
        }),
        case(GroupPolicy, ROOM, |s| {
            s["flow"]["group"]
                .as_object_mut()
                .unwrap()
                .remove("start_policy");
        }),
        case(GroupLimit, ROOM, |s| {
            s["flow"]["group"]["max_action_bytes"] = json!(255)
        }),
        case(GroupLimit, ROOM, |s| {
            s["flow"]["group"]["checkpoint_every_events"] = json!("20")
        }),
        case(PeerChannels, ROOM, |s| {
            s["flow"]["group"]["peer_channels"] = json!({"enabled": false, "routing": "hook"})
        }),
        case(
            PeerChannels,
            ROOM,
            |s| {
                s["flow"]["group"]["peer_channels"] =
                    json!({"enabled": true, "routing": "hook", "channels": ["a", "a"]})
            },
        ),
        case(
            PeerChannels,
            ROOM,
            |s| {
                s["flow"]["group"]["peer_channels"] =
                    json!({"enabled": true, "routing": "all_members", "channels": ["Chat"]})
            },
        ),
        case(
            PeerChannels,
            ROOM,
            |s| {
                s["flow"]["group"]["peer_channels"] =
                    json!({"enabled": true, "routing": "all", "channels": ["chat"]})
            },
        ),
        case(PeerChannels, ROOM, |s| {
            s["flow"]["group"]["peer_channels"] = json!({"enabled": true, "routing": "hook",
                "channels": ["chat"], "max_message_bytes": 70000})
        }),
        case(PeerChannels, ROOM, |s| {
            s["flow"]["group"]["peer_channels"] = json!("on")
        }),
        case(RealtimeSection, REALTIME, |s| {
            s["flow"].as_object_mut().unwrap().remove("realtime");
        }),
        case(RealtimeUnknownField, REALTIME, |s| {
            s["flow"]["realtime"]["ticks"] = json!(1)
        }),
        case(RealtimeSetting, REALTIME, |s| {
            s["flow"]["realtime"]["tick_rate_hz"] = json!(61)
        }),
        case(RealtimeSetting, REALTIME, |s| {
            s["flow"]["realtime"]["disconnect_policy"] = json!("pause")
        }),
        case(EngineMessageMissing, REALTIME, |s| {
            without_message(s, "rt_frame")
        }),
        case(EngineFieldUndeclared, REALTIME, |s| {
            message(s, "rt_command_ack")["fields"]
                .as_object_mut()
                .unwrap()
                .remove("reason");
        }),
        case(EngineFieldRequired, REALTIME, |s| {
            message(s, "rt_reject")["fields"]["why"] = json!({"type": "text", "required": true})
        }),
        case(Phases, "guess-number", |s| {
            s["flow"] = json!({"phases": {}})
        }),
        case(PhaseRepeat, "guess-number", |s| {
            s["flow"] = json!({"phases": [{"repeat": "forever"}]})
        }),
        case(PhaseRepeatParameter, "guess-number", |s| {
            s["flow"] = json!({"phases": [{"repeat": "total_rounds"}]})
        }),
        case(Exchange, "guess-number", |s| {
            s["flow"] = json!({"phases": [{"exchange": {}}]})
        }),
        case(Exchange, "guess-number", |s| {
            s["flow"] = json!({"phases": [{"exchange": [{"direction": "both"}]}]})
        }),
        case(
            ExchangeDirection,
            "guess-number",
            |s| {
                s["flow"] =
                    json!({"phases": [{"exchange": [{"message": "join", "direction": "up"}]}]})
            },
        ),
        case(EngineMessageMissing, "chat", |s| without_message(s, "end")),
        case(EngineMessageMissing, "coin-flip", |s| {
            message(s, "commit")["direction"] = json!("host_to_guest")
        }),
        case(EngineFieldUndeclared, "coin-flip", |s| {
            message(s, "commit")["fields"]
                .as_object_mut()
                .unwrap()
                .remove("hash");
        }),
        case(EngineFieldUndeclared, "thirty-one", |s| {
            message(s, "mp_play")["fields"]
                .as_object_mut()
                .unwrap()
                .remove("k_inner");
        }),
        case(EngineFieldRequired, "coin-flip", |s| {
            message(s, "commit")["fields"]["extra"] = json!({"type": "integer", "required": true})
        }),
        case(EngineFieldRequired, "chat", |s| {
            message(s, "end")["fields"]["why"] = json!({"type": "text", "required": true})
        }),
        case(MentalPokerMessage, "thirty-one", |s| {
            without_message(s, "mp_pass")
        }),
        case(Round, "coin-flip", |s| {
            s["flow"].as_object_mut().unwrap().remove("round");
        }),
        case(Round, "coin-flip", |s| {
            s["flow"]["round"]["value_field"] = json!("")
        }),
        case(ValueTypeRefForm, "coin-flip", |s| {
            s["flow"]["round"]["value_type_ref"] = json!("reveal.bit")
        }),
        case(JudgedFields, "coin-flip", |s| {
            s["flow"]["round"]["judged_fields"] = json!([])
        }),
        case(JudgedFields, "coin-flip", |s| {
            s["flow"]["round"]["judged_fields"] = json!(["winner", 3])
        }),
        case(FreeEndWhenType, "chat", |s| {
            s["flow"]["end_when"] = json!(5)
        }),
        case(Parameters, "guess-number", |s| s["parameters"] = json!([])),
        case(ParameterNotObject, "guess-number", |s| {
            s["parameters"]["x"] = json!(5)
        }),
        case(ParameterType, "guess-number", |s| {
            s["parameters"]["x"] = json!({"type": "colour"})
        }),
        case(ParameterDefault, "guess-number", |s| {
            s["parameters"]["x"] = json!({"type": "boolean", "default": "yes"})
        }),
        case(Columns, "guess-number", |s| {
            s["parameters"]["x"] = json!({"type": "table", "columns": {}})
        }),
        case(
            Columns,
            "guess-number",
            |s| {
                s["parameters"]["x"] =
                    json!({"type": "table", "columns": {"hp": {"type": "object"}}})
            },
        ),
        case(Decision, "guess-number", |s| {
            s["decision"] = json!({"mode": "sometimes"})
        }),
        case(Decision, "guess-number", |s| {
            s["decision"] = json!({"timeout_seconds": 0})
        }),
        case(CommitReveal, "guess-number", |s| {
            s["commit_reveal"] = json!({"algorithm": "MD5"})
        }),
        case(CommitReveal, "guess-number", |s| {
            s["commit_reveal"] = json!({"algorithm": "SHA256", "nonce_length": 8})
        }),
        case(Timing, "guess-number", |s| {
            s["timing"] = json!({"mode": "later"})
        }),
        case(Timing, "guess-number", |s| {
            s["timing"] = json!({"mode": "none", "min_think_seconds": -1})
        }),
        case(ShadowJudge, "guess-number", |s| {
            s["shadow_judge"] = json!("yes")
        }),
    ]
}

/// The base specs of the cases (built-ins), checked clean first: a case adds its error.
/// The reference's Community Room and Tank Battle, the bases of the room and realtime cases
/// (no built-in of ours is in those modes yet).
const ROOM: &str = "community-room";
const REALTIME: &str = "tank-battle";

fn base(alias: &str) -> Value {
    let sample = |prefix: &str| {
        let dir = reference_package_dir().join("protocols").join(prefix);
        let mut found = Vec::new();
        collect_specs(&dir, &mut found);
        serde_json::from_str(&std::fs::read_to_string(&found[0]).unwrap()).unwrap()
    };
    match alias {
        ROOM => sample("9a8a5128"),
        REALTIME => sample("24765ced"),
        _ => builtin(alias),
    }
}

#[test]
fn every_lint_error_the_schema_claims_is_rejected_by_it() {
    let validator = validator();
    for alias in [
        "guess-number",
        "chat",
        "coin-flip",
        "thirty-one",
        ROOM,
        REALTIME,
    ] {
        let spec = base(alias);
        assert!(lint_errors(&spec).is_empty(), "{alias}: {:?}", lint(&spec));
        assert!(validator.is_valid(&spec), "{alias}");
    }
    let mut covered = BTreeSet::new();
    for (index, case) in cases().into_iter().enumerate() {
        let mut spec = base(case.base);
        (case.edit)(&mut spec);
        let errors = lint_errors(&spec);
        assert!(
            errors.contains(&case.check),
            "case {index} ({}) makes {errors:?}",
            case.check
        );
        assert!(
            !validator.is_valid(&spec),
            "case {index}: the linter reports {}, the schema accepts {spec}",
            case.check
        );
        covered.insert(case.check);
    }
    let claimed: BTreeSet<Check> = Check::ALL
        .iter()
        .copied()
        .filter(|check| {
            matches!(
                check.schema_coverage(),
                SchemaCoverage::Full | SchemaCoverage::Partial(_)
            )
        })
        .collect();
    let missing: Vec<&Check> = claimed.difference(&covered).collect();
    assert!(missing.is_empty(), "no case for {missing:?}");
}

/// Values put in place of each node of a clean spec.
fn probes() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(""),
        json!("x"),
        json!("both"),
        json!([]),
        json!(["x"]),
        json!({}),
        json!({"type": "enum"}),
    ]
}

/// Keys added to every object of a clean spec, with each of [`ADDED_VALUES`].
const ADDED_KEYS: [&str; 14] = [
    "description",
    "required",
    "min",
    "max",
    "values",
    "items",
    "container",
    "max_length",
    "default",
    "end_when",
    "judged_fields",
    "repeat",
    "exchange",
    "direction",
];
const ADDED_VALUES: [&str; 2] = ["\"x\"", "1.5"];

/// Every path of a JSON value, as (parent path, key or index) steps from the root.
fn paths(value: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                prefix.push(Step::Key(key.clone()));
                out.push(prefix.clone());
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                prefix.push(Step::Index(index));
                out.push(prefix.clone());
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn pointer<'a>(spec: &'a Value, path: &[Step]) -> &'a Value {
    path.iter().fold(spec, |node, step| match step {
        Step::Key(key) => &node[key.as_str()],
        Step::Index(index) => &node[*index],
    })
}

fn pointer_mut<'a>(spec: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(spec, |node, step| match step {
        Step::Key(key) => &mut node[key.as_str()],
        Step::Index(index) => &mut node[*index],
    })
}

/// `spec` with the node at `path` replaced (`Some`) or removed (`None`).
fn edited(spec: &Value, path: &[Step], replacement: Option<&Value>) -> Value {
    let mut spec = spec.clone();
    let (last, parents) = path.split_last().unwrap();
    let mut node = &mut spec;
    for step in parents {
        node = match step {
            Step::Key(key) => &mut node[key.as_str()],
            Step::Index(index) => &mut node[*index],
        };
    }
    match (last, replacement) {
        (Step::Key(key), Some(value)) => node[key.as_str()] = value.clone(),
        (Step::Key(key), None) => {
            node.as_object_mut().unwrap().remove(key);
        }
        (Step::Index(index), Some(value)) => node[*index] = value.clone(),
        (Step::Index(index), None) => {
            node.as_array_mut().unwrap().remove(*index);
        }
    }
    spec
}

/// Thousands of one-node edits of clean specs of every mode (each node removed or replaced,
/// and known keys added to every object): whenever the schema rejects an edit the linter
/// must too, and whenever the linter reports a check the schema fully
/// expresses the schema must reject it.
#[test]
fn the_schema_and_the_linter_agree_on_every_one_node_edit() {
    let validator = validator();
    let probes = probes();
    let mut edits = 0;
    let mut disagreements = Vec::new();
    for alias in [
        "guess-number",
        "chat",
        "coin-flip",
        "thirty-one",
        "text-transform",
        ROOM,
        REALTIME,
    ] {
        let spec = base(alias);
        let mut all = Vec::new();
        paths(&spec, &mut Vec::new(), &mut all);
        let mut objects: Vec<Vec<Step>> = all.clone();
        objects.push(Vec::new());
        objects.retain(|path| pointer(&spec, path).is_object());
        let mut variants: Vec<(String, Value)> = Vec::new();
        for path in &all {
            for replacement in std::iter::once(None).chain(probes.iter().map(Some)) {
                let edit = format!("{path:?} := {replacement:?}");
                variants.push((edit, edited(&spec, path, replacement)));
            }
        }
        for path in &objects {
            for key in ADDED_KEYS {
                if pointer(&spec, path).get(key).is_some() {
                    continue;
                }
                for value in ADDED_VALUES {
                    let mut variant = spec.clone();
                    let value: Value = serde_json::from_str(value).unwrap();
                    pointer_mut(&mut variant, path)[key] = value.clone();
                    variants.push((format!("{path:?} + {key} = {value}"), variant));
                }
            }
        }
        for (edit, variant) in variants {
            edits += 1;
            let errors = lint_errors(&variant);
            let schema_accepts = validator.is_valid(&variant);
            let full = errors
                .iter()
                .find(|c| c.schema_coverage() == SchemaCoverage::Full);
            let problem = match (schema_accepts, errors.is_empty(), full) {
                (false, true, _) => "the schema rejects it, the linter passes it".to_string(),
                (true, _, Some(check)) => {
                    format!("the linter reports {check}, the schema accepts it")
                }
                _ => continue,
            };
            disagreements.push(format!("{alias} {edit}: {problem}"));
        }
    }
    assert!(edits > 3000, "{edits} edits");
    assert!(
        disagreements.is_empty(),
        "{} of {edits} edits disagree, e.g.:\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(15)].join("\n")
    );
}
