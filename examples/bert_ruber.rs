//! BERT-RUBER: trains the unreferenced model on DailyDialog++ and scores USR-PersonaChat with the
//! unreferenced, referenced and hybrid scores, correlated with the human ratings.
//!
//! A thin `main` over [`dialeval_cli::commands::bert_ruber`], whose documentation says what it does
//! and how (`cli/src/commands/bert_ruber.rs`); its flags: `cargo run --release --example bert_ruber -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::bert_ruber::main(std::env::args_os())
}
