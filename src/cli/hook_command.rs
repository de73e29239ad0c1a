//! The commands that need the embedded interpreter (they run hooks, or report on the
//! interpreter) as a type of their own, so that the `aigenora` binary, which hands them to
//! `aigenora-hooks` unseen, never links their code nor libpython.

use std::process::ExitCode;

use super::{GlobalArgs, demo, doctor, mcp, play, protocol_test};

/// One command that needs the interpreter, with its parsed flags.
#[derive(Debug)]
pub enum HookCommand {
    Host(play::HostArgs),
    Join(play::JoinArgs),
    Guest(play::GuestArgs),
    Demo(demo::DemoArgs),
    ProtocolTest(protocol_test::TestArgs),
    Bootstrap(doctor::BootstrapArgs),
    Doctor(doctor::DoctorArgs),
    Mcp(mcp::McpArgs),
}

impl HookCommand {
    /// Runs the command in this process (the `aigenora-hooks` binary).
    pub fn run(self, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
        match self {
            HookCommand::Host(args) => play::host(args, global),
            HookCommand::Join(args) => play::join(args, global),
            HookCommand::Guest(args) => play::guest(args, global),
            HookCommand::Demo(args) => demo::run(args, global),
            HookCommand::ProtocolTest(args) => protocol_test::run(args, global),
            HookCommand::Bootstrap(args) => doctor::bootstrap(args, global),
            HookCommand::Doctor(args) => doctor::doctor(args, global),
            HookCommand::Mcp(args) => mcp::run(args, global),
        }
    }
}
