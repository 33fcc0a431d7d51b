//! The `strata` command-line tool: a thin shell over library code. It parses flags and
//! dispatches; the work lives in the modules it calls.

// ---- tools (commands/) ----
mod commands;
// ---- end tools ----

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "strata",
    version,
    about = "Strata: an LSM key-value store with LevelDB's format"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    // ---- tools (commands/) ----
    #[command(flatten)]
    Tool(commands::ToolCommand),
    // ---- end tools ----
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        // ---- tools (commands/) ----
        Command::Tool(command) => commands::run(command),
        // ---- end tools ----
    }
}
