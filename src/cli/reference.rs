//! The command reference of the agent guide (`COMMANDS.md`), written from the command line's
//! own definition so that it lists exactly the commands and flags this binary takes.

use clap::{Arg, ArgAction, Command, CommandFactory};

/// Every command of this binary with its usage, flags, defaults and help.
pub fn commands_markdown() -> String {
    let mut root = super::Cli::command();
    root.build();
    let mut text = format!(
        "# Command reference (aigenora {})\n\n\
         Generated from this binary's command line. Flags every command takes: \
         `--data-dir DIR`, `--server URL`, `--help`. Errors are one line on stderr \
         (`error: ...`, exit code 1); usage errors exit 2.\n",
        super::super::skill::VERSION
    );
    for sub in root.get_subcommands() {
        section(&mut text, sub, "aigenora");
    }
    text
}

fn section(text: &mut String, command: &Command, parent: &str) {
    if command.get_name() == "help" {
        return;
    }
    let path = format!("{parent} {}", command.get_name());
    if command.has_subcommands() {
        text.push_str(&format!("\n## {path}\n\n{}\n", about(command)));
        for sub in command.get_subcommands() {
            section(text, sub, &path);
        }
        return;
    }
    let heading = if parent == "aigenora" { "##" } else { "###" };
    text.push_str(&format!("\n{heading} {path}\n\n{}\n\n", about(command)));
    let usage = command
        .clone()
        .bin_name(path.clone())
        .render_usage()
        .to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    text.push_str(&format!("```\n{usage}\n```\n"));
    let arguments: Vec<&Arg> = command.get_arguments().filter(|a| shown(a)).collect();
    if !arguments.is_empty() {
        text.push('\n');
    }
    for argument in arguments {
        text.push_str(&format!("- {}\n", describe(argument)));
    }
}

fn about(command: &Command) -> String {
    command
        .get_long_about()
        .or(command.get_about())
        .map(|about| about.to_string())
        .unwrap_or_default()
}

/// Leaves out what every command takes (said once at the top).
fn shown(argument: &Arg) -> bool {
    !argument.is_global_set()
        && !matches!(argument.get_id().as_str(), "help" | "version")
        && !argument.is_hide_set()
}

fn describe(argument: &Arg) -> String {
    let value = argument
        .get_value_names()
        .and_then(|names| names.first())
        .map(|name| name.to_string())
        .unwrap_or_else(|| argument.get_id().as_str().to_uppercase());
    let takes_value = matches!(argument.get_action(), ArgAction::Set | ArgAction::Append);
    let mut name = match (argument.get_long(), argument.get_short()) {
        (Some(long), _) => format!("--{long}"),
        (None, Some(short)) => format!("-{short}"),
        (None, None) => format!("<{value}>"),
    };
    if takes_value && argument.get_long().is_some() {
        name.push_str(&format!(" <{value}>"));
    }
    let mut line = format!("`{name}`");
    if let Some(help) = argument.get_long_help().or(argument.get_help()) {
        line.push_str(&format!(" — {}", help.to_string().replace('\n', " ")));
    }
    let possible: Vec<String> = argument
        .get_possible_values()
        .iter()
        .filter(|value| !value.is_hide_set())
        .map(|value| value.get_name().to_string())
        .collect();
    if takes_value && !possible.is_empty() {
        line.push_str(&format!(" (one of: {})", possible.join(", ")));
    }
    let defaults: Vec<String> = argument
        .get_default_values()
        .iter()
        .map(|value| value.to_string_lossy().into_owned())
        .collect();
    if takes_value && !defaults.is_empty() {
        line.push_str(&format!(" [default: {}]", defaults.join(", ")));
    }
    if argument.is_required_set() && argument.get_long().is_some() {
        line.push_str(" (required)");
    }
    line
}
