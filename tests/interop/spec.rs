//! Differential tests of the spec contract against the reference's own code: many generated
//! specs hashed by our binary and by the reference must agree byte for byte (floats, big
//! integers, NaN/Infinity, unicode, duplicate keys, flow normalisation, parameter defaults),
//! and `aigenora validate` must give the reference validator's verdict and error text.

use std::fmt::Write;
use std::process::Command;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use crate::support::cli::aigenora;
use crate::support::reference::{reference_package_dir, reference_python};

const SPECS: usize = 400;

/// Writes random JSON text directly, so the generator can emit what serde cannot
/// (NaN, duplicate keys, unusual number spellings, odd whitespace).
struct Generator {
    rng: StdRng,
}

impl Generator {
    fn ws(&mut self) -> &'static str {
        ["", "", " ", "\n  ", "\t"][self.rng.gen_range(0..5)]
    }

    fn string(&mut self) -> String {
        const PIECES: [&str; 24] = [
            "a",
            "Z",
            "rock",
            "é",
            "～",
            "😀",
            "中文",
            "\\\"",
            "\\\\",
            "\\n",
            "\\t",
            "\\u0001",
            "\\u001f",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\u{7f}",
            "\u{85}",
            "\u{2028}",
            "\u{feff}",
            "e\u{301}",
            "/",
            "\\/",
            " ",
            "\u{10ffff}",
        ];
        let mut out = String::from("\"");
        for _ in 0..self.rng.gen_range(0..5) {
            out.push_str(PIECES[self.rng.gen_range(0..PIECES.len())]);
        }
        out.push('"');
        out
    }

    fn number(&mut self) -> String {
        match self.rng.gen_range(0..12) {
            0 => self.rng.gen_range(-1000i64..1000).to_string(),
            1 => format!(
                "{}{}",
                if self.rng.gen_bool(0.5) { "-" } else { "" },
                "9".repeat(self.rng.gen_range(19..40))
            ),
            2 => "-0".to_string(),
            3 => "-0.0".to_string(),
            4 => format!(
                "{}e{}",
                self.rng.gen_range(1..10),
                self.rng.gen_range(-330..330)
            ),
            5 => format!(
                "{}.{}E+{}",
                self.rng.gen_range(0..100),
                self.rng.gen_range(0..1000),
                self.rng.gen_range(0..30)
            ),
            6 => format!(
                "0.{}{}",
                "0".repeat(self.rng.gen_range(0..8)),
                self.rng.gen_range(1..99999)
            ),
            7 => format!("{}.0", self.rng.gen_range(0u64..u64::MAX)),
            8 => ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400"]
                [self.rng.gen_range(0..6)]
            .to_string(),
            9 => format!(
                "{}",
                self.rng.r#gen::<f64>() * 10f64.powi(self.rng.gen_range(-20..25))
            ),
            10 => format!("{:e}", self.rng.r#gen::<f64>()),
            _ => format!(
                "{}.{}",
                self.rng.gen_range(0..1_000_000),
                self.rng.gen_range(0..1_000_000_000u64)
            ),
        }
    }

    fn value(&mut self, depth: u32) -> String {
        let pick = if depth > 3 {
            self.rng.gen_range(0..5)
        } else {
            self.rng.gen_range(0..8)
        };
        match pick {
            0 => ["null", "true", "false"][self.rng.gen_range(0..3)].to_string(),
            1 | 2 => self.number(),
            3 | 4 => self.string(),
            5 => {
                let items: Vec<String> = (0..self.rng.gen_range(0..4))
                    .map(|_| self.value(depth + 1))
                    .collect();
                format!("[{}]", items.join(","))
            }
            _ => self.object(depth + 1, &[]),
        }
    }

    /// An object with random keys (duplicates included) plus `fixed` entries.
    fn object(&mut self, depth: u32, fixed: &[(String, String)]) -> String {
        let mut entries: Vec<(String, String)> = fixed.to_vec();
        for _ in 0..self.rng.gen_range(0..4) {
            let key = self.string();
            entries.push((key.clone(), self.value(depth)));
            if self.rng.gen_bool(0.1) {
                entries.push((key, self.value(depth)));
            }
        }
        let mut out = String::from("{");
        for (index, (key, value)) in entries.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            let ws = self.ws();
            write!(out, "{ws}{key}{ws}:{ws}{value}").unwrap();
        }
        out.push('}');
        out
    }

    fn flow(&mut self) -> String {
        let mut fields = Vec::new();
        let modes = [
            "\"session_loop\"",
            "\"simultaneous_round\"",
            "\"free\"",
            "\"authoritative_realtime\"",
            "\"authoritative_group\"",
            "\"\"",
            "null",
            "\"sequenced_turn\"",
            "7",
        ];
        if self.rng.gen_bool(0.8) {
            fields.push((
                "\"mode\"".to_string(),
                modes[self.rng.gen_range(0..modes.len())].to_string(),
            ));
        }
        for key in [
            "\"phases\"",
            "\"round\"",
            "\"realtime\"",
            "\"group\"",
            "\"end_when\"",
            "\"termination\"",
        ] {
            if self.rng.gen_bool(0.4) {
                let value = match self.rng.gen_range(0..3) {
                    0 => "[]".to_string(),
                    1 => "{}".to_string(),
                    _ => self.value(1),
                };
                fields.push((key.to_string(), value));
            }
        }
        self.object(1, &fields)
    }

    fn parameters(&mut self) -> String {
        let mut fields = Vec::new();
        for _ in 0..self.rng.gen_range(0..4) {
            let name = self.string();
            let default = ("\"default\"".to_string(), self.value(2));
            let schema = self.object(2, &[default]);
            fields.push((
                name,
                if self.rng.gen_bool(0.8) {
                    schema
                } else {
                    self.value(2)
                },
            ));
        }
        self.object(1, &fields)
    }

    fn spec(&mut self) -> String {
        let mut fields = Vec::new();
        for key in [
            "messages",
            "rules",
            "choices",
            "commit_reveal",
            "timing",
            "name",
            "decision",
            "spec_version",
            "shadow_judge",
        ] {
            if self.rng.gen_bool(0.5) {
                fields.push((format!("\"{key}\""), self.value(1)));
            }
        }
        if self.rng.gen_bool(0.7) {
            fields.push(("\"flow\"".to_string(), self.flow()));
        }
        if self.rng.gen_bool(0.6) {
            let parameters = if self.rng.gen_bool(0.9) {
                self.parameters()
            } else {
                self.value(1)
            };
            fields.push(("\"parameters\"".to_string(), parameters));
        }
        self.object(0, &fields)
    }
}

#[test]
fn generated_specs_hash_identically_in_both_implementations() {
    let dir = tempfile::tempdir().unwrap();
    let mut generator = Generator {
        rng: StdRng::seed_from_u64(0x5eed_a16e),
    };
    let files: Vec<_> = (0..SPECS)
        .map(|index| {
            let path = dir.path().join(format!("spec-{index:04}.json"));
            std::fs::write(&path, generator.spec()).unwrap();
            path
        })
        .collect();

    let script = "import sys\nfrom aigenora.engine.crypto import protocol_hash\n\
        for path in sys.argv[1:]:\n    try:\n        print(protocol_hash(path))\n    except Exception as e:\n        print('ERROR ' + type(e).__name__)\n";
    let output = Command::new(reference_python())
        .arg("-c")
        .arg(script)
        .args(&files)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reference: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(reference.len(), SPECS);

    let mut hashed = 0;
    for (path, expected) in files.iter().zip(&reference) {
        let ours = aigenora()
            .args(["protocol", "hash"])
            .arg(path)
            .output()
            .unwrap();
        if expected.starts_with("ERROR") {
            assert!(
                !ours.status.success(),
                "reference failed ({expected}) but we hashed {}",
                path.display()
            );
            continue;
        }
        assert!(
            ours.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_eq!(
            String::from_utf8(ours.stdout).unwrap().trim(),
            expected,
            "{}",
            std::fs::read_to_string(path).unwrap()
        );
        hashed += 1;
    }
    assert!(
        hashed > SPECS * 3 / 4,
        "only {hashed} of {SPECS} specs were hashable; the generator is too hostile"
    );
}

/// The same messages validated by the reference's `validate_message_obj` and by ours must
/// give the same verdict and the same error text.
#[test]
fn message_errors_match_the_reference_validator() {
    let rps = reference_package_dir().join(
        "protocols/43a80648/1a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f/spec.json",
    );
    let cases: Vec<(Value, Option<&str>)> = vec![
        (
            json!({"action": "commit", "round": 0, "hash": "a".repeat(64)}),
            Some("host_to_guest"),
        ),
        (
            json!({"action": "commit", "round": -1, "hash": "A".repeat(64), "x": 1}),
            Some("guest_to_host"),
        ),
        (
            json!({"action": "reveal", "round": 1, "choice": "lizard", "nonce": "abc"}),
            None,
        ),
        (
            json!({"action": "reveal", "round": true, "choice": 3, "nonce": "0123456789abcdef"}),
            None,
        ),
        (
            json!({"action": "join", "best_of": 10000}),
            Some("guest_to_host"),
        ),
        (
            json!({"action": "join", "best_of": 3.0}),
            Some("host_to_guest"),
        ),
        (json!({"action": "ready"}), Some("host_to_guest")),
        (json!({"action": "nope"}), Some("both")),
        (json!({"best_of": 3}), None),
        (
            json!({"action": "round_result", "round": 0, "host_choice": "rock", "guest_choice": "paper",
                "round_winner": "guest", "host_wins": 0, "guest_wins": 1, "game_over": "no", "game_winner": "none"}),
            None,
        ),
        (json!({"action": "error", "reason": "it's \"bad\""}), None),
        (json!([1, 2]), None),
    ];
    let script = "import json, sys\nfrom aigenora.proto.validate import load_spec, validate_message_obj\n\
        spec = load_spec(sys.argv[1])\nfor line in sys.stdin:\n    case = json.loads(line)\n    try:\n        \
        validate_message_obj(spec, case['msg'], case['direction'])\n        print('OK')\n    except Exception as e:\n        print(str(e))\n";
    let input: String = cases
        .iter()
        .map(|(msg, dir)| format!("{}\n", json!({"msg": msg, "direction": dir})))
        .collect();
    let mut child = Command::new(reference_python())
        .arg("-c")
        .arg(script)
        .arg(&rps)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let expected: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(expected.len(), cases.len());
    for ((message, direction), expected) in cases.iter().zip(&expected) {
        let mut command = aigenora();
        command.arg("validate").arg(&rps).arg(message.to_string());
        if let Some(direction) = direction {
            command.args(["--direction", direction]);
        }
        let output = command.output().unwrap();
        let ours = if output.status.success() {
            String::from_utf8(output.stdout).unwrap().trim().to_string()
        } else {
            String::from_utf8(output.stderr)
                .unwrap()
                .trim()
                .trim_start_matches("error: invalid message: ")
                .to_string()
        };
        assert_eq!(&ours, expected, "message {message} direction {direction:?}");
    }
}

/// The reference's sample whose protocol directory starts with `prefix`.
fn reference_sample(prefix: &str) -> Value {
    let dir = reference_package_dir().join("protocols").join(prefix);
    let sub = std::fs::read_dir(&dir).unwrap().flatten().next().unwrap();
    serde_json::from_str(&std::fs::read_to_string(sub.path().join("spec.json")).unwrap()).unwrap()
}

/// Room (`flow.group`) and realtime (`flow.realtime`) sections, edited one key at a time
/// from the reference's Community Room and Tank Battle, must get the reference validator's
/// verdict: accepted by both, or refused by both.
#[test]
fn room_and_realtime_sections_get_the_reference_verdict() {
    let probes = [
        json!(null),
        json!(true),
        json!(false),
        json!(-1),
        json!(0),
        json!(1),
        json!(2),
        json!(3),
        json!(4),
        json!(32),
        json!(33),
        json!(60),
        json!(61),
        json!(255),
        json!(256),
        json!(601),
        json!(1024),
        json!(1025),
        json!(65536),
        json!(65537),
        json!(4.0),
        json!("x"),
        json!("exact"),
        json!("abort"),
        json!("continue"),
        json!("fixed_full"),
        json!([]),
        json!({}),
    ];
    let channels = |names: Value| json!({"enabled": true, "routing": "hook", "channels": names});
    let peer_channels = [
        json!({"enabled": false}),
        json!({"enabled": false, "routing": "hook"}),
        json!({"enabled": true}),
        json!({"enabled": 1}),
        json!({"enabled": true, "routing": "all_members", "channels": ["chat"]}),
        json!({"enabled": true, "routing": "everyone", "channels": ["chat"]}),
        json!({"enabled": true, "routing": "hook", "channels": ["chat"], "extra": 1}),
        json!({"enabled": true, "routing": "hook", "channels": ["chat"], "max_message_bytes": 255}),
        json!({"enabled": true, "routing": "hook", "channels": ["chat"], "max_message_bytes": null}),
        json!({"enabled": true, "routing": "hook", "channels": ["chat"], "max_message_bytes": 65536}),
        channels(json!([])),
        channels(json!(["a", "b-2", "c_3"])),
        channels(json!(["a", "a"])),
        channels(json!(["Chat"])),
        channels(json!(["2nd"])),
        channels(json!([7])),
        channels(json!(["a".repeat(32)])),
        channels(json!(["a".repeat(33)])),
        channels(json!((0..17).map(|i| format!("c{i}")).collect::<Vec<_>>())),
        json!([]),
        json!("on"),
    ];
    let mut cases: Vec<Value> = Vec::new();
    for (sample, section) in [("9a8a5128", "group"), ("24765ced", "realtime")] {
        let base = reference_sample(sample);
        cases.push(base.clone());
        let keys: Vec<String> = base["flow"][section]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .chain(["peer_channels".to_string(), "unknown_key".to_string()])
            .collect();
        for key in &keys {
            let mut removed = base.clone();
            removed["flow"][section]
                .as_object_mut()
                .unwrap()
                .remove(key);
            cases.push(removed);
            let values = if key == "peer_channels" {
                &peer_channels[..]
            } else {
                &probes[..]
            };
            for value in values {
                let mut edited = base.clone();
                edited["flow"][section][key] = value.clone();
                cases.push(edited);
            }
        }
        for replacement in [json!(null), json!([]), json!("room")] {
            let mut edited = base.clone();
            edited["flow"][section] = replacement;
            cases.push(edited);
        }
    }
    let script = "import json, sys\nfrom aigenora.proto.validate import validate_flow\n\
        for line in sys.stdin:\n    try:\n        validate_flow(json.loads(line))\n        print('OK')\n    \
        except Exception as e:\n        print('ERR ' + str(e))\n";
    let input: String = cases.iter().map(|case| format!("{case}\n")).collect();
    let mut child = Command::new(reference_python())
        .arg("-c")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let verdicts: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        verdicts.len(),
        cases.len(),
        "the reference answered every case"
    );
    let (mut accepted, mut refused, mut disagreements) = (0, 0, Vec::new());
    for (case, verdict) in cases.iter().zip(&verdicts) {
        let errors: Vec<String> = aigenora::spec::lint(case)
            .into_iter()
            .filter(|d| d.severity == aigenora::spec::Severity::Error)
            .map(|d| d.to_string())
            .collect();
        match (verdict.as_str(), errors.is_empty()) {
            ("OK", true) => accepted += 1,
            (v, false) if v.starts_with("ERR") => refused += 1,
            _ => disagreements.push(format!(
                "{}: reference {verdict}, ours {errors:?}",
                case["flow"]
            )),
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
    assert!(
        accepted > 40 && refused > 150,
        "{accepted} accepted, {refused} refused"
    );
}
