//! One run per output folder: [`OutputLock`] holds an exclusive lock on `OUT/.dialeval.lock`
//! for as long as a run writes there, so a second run into the same folder stops at once with
//! [`Error::Busy`] instead of interleaving its files and caches with the first's.
//!
//! The lock is the operating system's (`flock`, on Unix): it is released when the process
//! ends, however it ends, so a killed run never leaves a lock that blocks the next one. The
//! file says who holds it (`pid N since UNIX-SECONDS`) and is removed when the run ends; a run
//! that finds one without a lock on it (left by a killed run) takes it over and reports the
//! stale owner ([`OutputLock::stale_owner`]). On other systems the file is written but not
//! locked, so two runs there are not detected.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The lock file's name in an output folder.
pub const LOCK_FILE: &str = ".dialeval.lock";

/// An exclusive hold on an output folder, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
    stale: Option<String>,
}

impl OutputLock {
    /// Creates `dir` if needed and locks it for this process.
    ///
    /// # Errors
    /// [`Error::Busy`] naming the owner when another run holds it; [`Error::Io`].
    pub fn acquire(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK_FILE);
        // A holder that ends removes the file after we opened it: the lock we then get is on a
        // file no longer in the folder, so open it again (a few times at most).
        for _ in 0..8 {
            let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(|e| Error::io(&path, e))?;
            let mut owner = String::new();
            if !try_lock(&file).map_err(|e| Error::io(&path, e))? {
                // Written whole under the lock, so a reader sees a whole line or nothing.
                let _ = file.read_to_string(&mut owner);
                let owner = owner.trim();
                return Err(Error::Busy { dir: dir.to_owned(), owner: (!owner.is_empty()).then(|| owner.to_owned()) });
            }
            if !still_linked(&file, &path) {
                continue;
            }
            file.read_to_string(&mut owner).map_err(|e| Error::io(&path, e))?;
            let stale = Some(owner.trim().to_owned()).filter(|o| !o.is_empty());
            let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            let line = format!("pid {} since {since}\n", std::process::id());
            file.set_len(0).and_then(|()| file.rewind()).and_then(|()| file.write_all(line.as_bytes())).and_then(|()| file.flush()).map_err(|e| Error::io(&path, e))?;
            return Ok(Self { file, path, stale });
        }
        Err(Error::Busy { dir: dir.to_owned(), owner: Some("runs starting and ending in turn".into()) })
    }

    /// What a lock file nobody held said when this run took it: the owner of a run that was
    /// killed before it could remove the file.
    pub fn stale_owner(&self) -> Option<&str> {
        self.stale.as_deref()
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still locked, so a run waiting on this file opens the new one.
        let _ = std::fs::remove_file(&self.path);
        unlock(&self.file);
    }
}

/// Takes the exclusive lock without waiting: `false` when another holder has it.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(unix)]
fn unlock(file: &File) {
    let _ = rustix::fs::flock(file, rustix::fs::FlockOperation::Unlock);
}

/// Whether `path` still names the open `file` (not removed or replaced since it was opened).
#[cfg(unix)]
fn still_linked(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(not(unix))]
fn unlock(_file: &File) {}

#[cfg(not(unix))]
fn still_linked(_file: &File, _path: &Path) -> bool {
    true
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_until_the_first_ends() {
        let dir = std::env::temp_dir().join(format!("dialeval-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = OutputLock::acquire(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.stale_owner(), None);
        let err = OutputLock::acquire(&dir).map(|_| ()).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Busy { .. }), "{text}");
        assert!(text.contains(&format!("pid {}", std::process::id())) && text.contains("in use by another run"), "{text}");
        drop(first);
        assert!(!dir.join(LOCK_FILE).exists(), "a run that ends removes its lock file");
        let second = OutputLock::acquire(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(second.stale_owner(), None);
        drop(second);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lock_file_left_by_a_killed_run_is_taken_over() {
        let dir = std::env::temp_dir().join(format!("dialeval-lock-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join(LOCK_FILE), "pid 4194303 since 0\n").unwrap_or_else(|e| panic!("{e}"));
        let lock = OutputLock::acquire(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lock.stale_owner(), Some("pid 4194303 since 0"));
        assert!(std::fs::read_to_string(lock.path()).unwrap_or_default().starts_with(&format!("pid {} since", std::process::id())));
        drop(lock);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
