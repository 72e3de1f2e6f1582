//! Scratch directories and files of the integration tests, removed with what
//! they hold when dropped, so that a test run leaves nothing in the system's
//! temporary directory. Both read as a [`Path`].

// Each test binary uses the part it needs.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A fresh directory in the system's temporary directory, its name starting
/// with `ggpnet-{what}-`.
pub struct Dir(TempDir);

/// A new [`Dir`] for `what`.
pub fn dir(what: &str) -> Dir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("ggpnet-{what}-"))
        .tempdir()
        .expect("a scratch directory");
    Dir(dir)
}

/// A file named `name` holding `text`, alone in a fresh scratch directory:
/// the name is the caller's (commands print it; extensions choose readers).
pub struct File {
    path: PathBuf,
    _dir: Dir,
}

impl File {
    /// Writes `text` to a new file named `name`.
    pub fn new(name: &str, text: &str) -> File {
        let dir = dir("file");
        let path = dir.join(name);
        std::fs::write(&path, text).expect("a scratch file");
        File { path, _dir: dir }
    }
}

/// `Deref` to a path and the two `AsRef`s that `Command::arg` and the file
/// functions take, for a type holding the path at `$path`.
macro_rules! reads_as_path {
    ($type:ty, $self:ident => $path:expr) => {
        impl Deref for $type {
            type Target = Path;
            fn deref(&$self) -> &Path {
                $path
            }
        }

        impl AsRef<Path> for $type {
            fn as_ref(&$self) -> &Path {
                $path
            }
        }

        impl AsRef<OsStr> for $type {
            fn as_ref(&$self) -> &OsStr {
                $path.as_os_str()
            }
        }
    };
}

reads_as_path!(Dir, self => self.0.path());
reads_as_path!(File, self => &self.path);
