//! Trains the SLM (AMR-gated dual encoder) on CPU.
//!
//! A thin `main` over [`dialeval_cli::commands::train_slm`], whose documentation says what it does
//! and how (`cli/src/commands/train_slm.rs`); its flags: `cargo run --release --example train_slm -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::train_slm::main(std::env::args_os())
}
