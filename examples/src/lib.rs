//! Helpers shared by the example programs (`[[example]]` targets of this package).

use std::collections::HashMap;
use std::process::ExitCode;

/// Parses `--key value` pairs.
///
/// # Errors
/// An argument that is not `--key`, or a key without a value.
pub fn flags(args: impl IntoIterator<Item = String>) -> Result<HashMap<String, String>, String> {
    let mut opts = HashMap::new();
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        let key = flag.strip_prefix("--").ok_or_else(|| format!("unexpected argument {flag:?}"))?.to_owned();
        opts.insert(key, it.next().ok_or_else(|| format!("{flag} needs a value"))?);
    }
    Ok(opts)
}

/// The exit status of a program's `run`: success, or the error on stderr prefixed by `name`.
pub fn finish(name: &str, result: Result<(), Box<dyn std::error::Error>>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}
