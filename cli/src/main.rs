//! `dialeval`: the programs of the dialeval crates as one command.
//!
//! ```text
//! dialeval evaluate [--corpus usr|fed|fed-dialogue|grade|jsonl] [--input FILE] [--out DIR] …
//! dialeval merge SHARD_DIR… --out DIR
//! dialeval smatch TEST.amr GOLD.amr
//! dialeval <command> --help
//! ```

use std::ffi::OsString;
use std::process::ExitCode;

use dialeval_cli::commands::{COMMANDS, find};

fn usage() -> String {
    let width = COMMANDS.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut text = format!(
        "dialeval {}: automatic evaluation of open-domain dialogue responses\n\nUsage: dialeval <COMMAND> [ARGS]…   (dialeval <COMMAND> --help for its flags)\n\nCommands:\n",
        env!("CARGO_PKG_VERSION")
    );
    for c in &COMMANDS {
        text.push_str(&format!("  {:width$}  {}\n", c.name, c.about));
    }
    text.push_str("\nOptions:\n  -h, --help     this text\n  -V, --version  the version\n");
    text
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(first) = args.next() else {
        eprint!("{}", usage());
        return ExitCode::FAILURE;
    };
    match first.to_str() {
        Some("-h" | "--help" | "help") => {
            print!("{}", usage());
            ExitCode::SUCCESS
        }
        Some("-V" | "--version") => {
            println!("dialeval {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some(name) if find(name).is_some() => {
            let Some(command) = find(name) else { return ExitCode::FAILURE };
            // The program sees `dialeval <command>` as its name (its usage lines say so), or,
            // for one run as its own subcommand (`merge`), `dialeval` and the subcommand.
            let program = OsString::from(if command.prefix.is_empty() { format!("dialeval {}", command.name) } else { "dialeval".to_owned() });
            let full: Vec<OsString> = std::iter::once(program).chain(command.prefix.iter().map(OsString::from)).chain(args).collect();
            (command.run)(full)
        }
        _ => {
            eprintln!("dialeval: no command {:?}\n", first.to_string_lossy());
            eprint!("{}", usage());
            ExitCode::FAILURE
        }
    }
}
