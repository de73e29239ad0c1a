//! The agent guide shipped inside the binary: `SKILL.md` (with the frontmatter coding agents
//! read: name, description, version) and the appendices an agent opens on demand, rendered
//! for this build — its version substituted, the command reference and the game tables
//! generated — so the guide cannot drift from the binary; and where each coding agent looks
//! for it ([`Target`]). Installing, updating and checking a copy on disk is [`install`]; the copies installed are
//! remembered by [`installed`].

pub mod install;
pub mod installed;

use std::path::{Path, PathBuf};

/// The version every rendered guide carries: the binary's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The guide's main file, the one a coding agent loads.
pub const SKILL_FILE: &str = "SKILL.md";

/// The user's own notes beside the guide: created once, never replaced.
pub const PERSONAL_FILE: &str = "PERSONAL.md";

/// The appendix generated from the command line's definition.
pub const COMMANDS_FILE: &str = "COMMANDS.md";

/// Where the version stands in `SKILL.md` before rendering.
const VERSION_PLACEHOLDER: &str = "@VERSION@";

const SKILL_MD: &str = include_str!("files/SKILL.md");
const HOOKS_MD: &str = include_str!("files/HOOKS.md");
const PROTOCOLS_MD: &str = include_str!("files/PROTOCOLS.md");
const ROOMS_MD: &str = include_str!("files/ROOMS.md");
const GAMES_MD: &str = include_str!("files/GAMES.md");
const PERSONAL_MD: &str = include_str!("files/PERSONAL.md");

/// A coding agent whose skill directory we know.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    clap::ValueEnum,
    strum::IntoStaticStr,
    serde::Serialize,
    serde::Deserialize,
)]
#[strum(serialize_all = "kebab-case")]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// Claude Code: `.claude/skills/aigenora/`.
    ClaudeCode,
    /// Codex: `.agents/skills/aigenora/`.
    Codex,
    /// OpenCode: `.opencode/skills/aigenora/`.
    Opencode,
}

impl Target {
    /// The guide's directory, relative to the project (or home) directory the agent runs in.
    pub fn relative_dir(self) -> PathBuf {
        let root = match self {
            Target::ClaudeCode => ".claude",
            Target::Codex => ".agents",
            Target::Opencode => ".opencode",
        };
        Path::new(root).join("skills").join("aigenora")
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One file of the guide, rendered for this build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuideFile {
    pub name: &'static str,
    pub text: String,
}

/// The guide this binary installs: `SKILL.md` first, then the appendices. `commands` is the
/// command reference (generated from the command line, which lives above this module).
pub fn guide(commands: String) -> Vec<GuideFile> {
    let file = |name, text: &str| GuideFile {
        name,
        text: text.to_string(),
    };
    vec![
        GuideFile {
            name: SKILL_FILE,
            text: SKILL_MD.replace(VERSION_PLACEHOLDER, VERSION),
        },
        GuideFile {
            name: COMMANDS_FILE,
            text: commands,
        },
        GuideFile {
            name: "GAMES.md",
            text: format!("{GAMES_MD}\n{}", game_tables()),
        },
        file("HOOKS.md", HOOKS_MD),
        file("PROTOCOLS.md", PROTOCOLS_MD),
        file("ROOMS.md", ROOMS_MD),
    ]
}

/// What `install` writes once and never replaces.
pub fn personal_template() -> &'static str {
    PERSONAL_MD
}

/// The tables of what this build plays, from the protocol tables themselves.
fn game_tables() -> String {
    let mut text =
        String::from("## Built-in protocols\n\n| alias | name | flow mode |\n|---|---|---|\n");
    for builtin in crate::protocols::BUILTINS {
        let spec = builtin.spec();
        let mode = spec.flow_mode().map(|m| m.as_str()).unwrap_or("?");
        text.push_str(&format!(
            "| `{}` | {} | {mode} |\n",
            builtin.alias,
            spec.name()
        ));
    }
    text.push_str(
        "\n## Well-known contracts (our hooks; the spec comes from the server)\n\n\
         | alias | name | protocol_id |\n|---|---|---|\n",
    );
    for contract in crate::protocols::well_known::WELL_KNOWN {
        text.push_str(&format!(
            "| `{}` | {} | `{}` |\n",
            contract.alias, contract.name, contract.protocol_id
        ));
    }
    text
}

/// The `version:` of a guide's frontmatter (the block between the first two `---` lines).
pub fn frontmatter_version(text: &str) -> Option<&str> {
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    lines
        .take_while(|line| line.trim_end() != "---")
        .find_map(|line| line.strip_prefix("version:"))
        .map(|value| value.trim().trim_matches('"'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rendered_guide_carries_this_binarys_version_in_its_frontmatter() {
        let guide = guide(String::new());
        let skill = &guide[0];
        assert_eq!(skill.name, SKILL_FILE);
        assert_eq!(frontmatter_version(&skill.text), Some(VERSION));
        assert!(!skill.text.contains(VERSION_PLACEHOLDER));
        let head: Vec<&str> = skill.text.lines().take(5).collect();
        assert!(head.contains(&"name: aigenora"), "{head:?}");
        assert!(
            head.iter().any(|l| l.starts_with("description: ")),
            "{head:?}"
        );
    }

    #[test]
    fn the_overview_names_every_appendix_it_ships() {
        let guide = guide(String::new());
        for file in &guide[1..] {
            assert!(
                guide[0].text.contains(&format!("`{}`", file.name)),
                "{}",
                file.name
            );
        }
        assert!(guide[0].text.contains(&format!("`{PERSONAL_FILE}`")));
    }

    #[test]
    fn the_game_tables_list_every_builtin_and_well_known_contract() {
        let tables = game_tables();
        for alias in crate::protocols::BUILTINS.iter().map(|b| b.alias) {
            assert!(tables.contains(&format!("`{alias}`")), "{alias}");
        }
        for contract in crate::protocols::well_known::WELL_KNOWN {
            assert!(tables.contains(contract.protocol_id), "{}", contract.alias);
        }
    }

    #[test]
    fn a_frontmatter_version_is_read_only_from_the_frontmatter() {
        assert_eq!(
            frontmatter_version("---\nname: x\nversion: 1.2.3\n---\n"),
            Some("1.2.3")
        );
        assert_eq!(
            frontmatter_version("---\nversion: \"0.4\"\n---\n"),
            Some("0.4")
        );
        assert_eq!(frontmatter_version("---\nname: x\n---\nversion: 9\n"), None);
        assert_eq!(frontmatter_version("version: 9\n"), None);
    }
}
