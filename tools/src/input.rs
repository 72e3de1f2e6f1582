//! Reading a user's file with bounds: only regular files (a FIFO would block, a
//! device like `/dev/zero` never ends), and at most a limit of bytes.

use super::Failure;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::Path;

/// The largest input read when `--max-input` is not given, in MiB.
pub(crate) const DEFAULT_MAX_INPUT_MIB: u64 = 64;

/// Why `path` is not a regular file, if it is not.
fn not_regular(metadata: &std::fs::Metadata) -> Option<&'static str> {
    let kind = metadata.file_type();
    if kind.is_file() {
        return None;
    }
    Some(if kind.is_dir() {
        "it is a directory"
    } else {
        "it is not a regular file (a device, FIFO or socket)"
    })
}

/// Opens `path` for reading without waiting for a writer (a FIFO swapped in after
/// the check must not block).
fn open(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// The text of the regular file `path`, refused when it is something else, is
/// longer than `max_bytes`, or is not UTF-8; each error names the file and the reason.
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> Result<String, Failure> {
    let place = format!("error: cannot read {}", path.display());
    let fail = |reason: String| Failure::input(reason).at(&place);
    let io = |e: std::io::Error| Failure::of(&e).at(&place);
    let metadata = std::fs::metadata(path).map_err(io)?;
    if let Some(reason) = not_regular(&metadata) {
        return Err(fail(reason.to_owned()));
    }
    let file = open(path).map_err(io)?;
    // The file opened may not be the one checked: check it again.
    let metadata = file.metadata().map_err(io)?;
    if let Some(reason) = not_regular(&metadata) {
        return Err(fail(reason.to_owned()));
    }
    let too_long = || {
        fail(format!(
            "it is larger than {} MiB (raise --max-input)",
            max_bytes >> 20
        ))
    };
    if metadata.len() > max_bytes {
        return Err(too_long());
    }
    let mut bytes = Vec::new();
    // One byte past the limit tells a file that grew while being read.
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_long());
    }
    utf8_text(bytes).map_err(|reason| fail(format!("it is {reason}")))
}

/// `bytes` as text, or why not: `not UTF-8 text (invalid byte at offset N)`.
pub(crate) fn utf8_text(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, contents: &[u8]) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("ggpnet-input-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        path
    }

    #[test]
    fn reads_a_small_file() {
        let path = temp("small", b"(role r)");
        assert_eq!(read_text(&path, 1 << 20).unwrap(), "(role r)");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn refuses_too_long_non_utf8_and_directories() {
        let path = temp("long", &[b'a'; 2 << 20]);
        let e = read_text(&path, 1 << 20).unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "error: cannot read {}: it is larger than 1 MiB (raise --max-input)",
                path.display()
            )
        );
        std::fs::remove_file(path).unwrap();
        let path = temp("latin1", b"(role \xe9)");
        let e = read_text(&path, 1 << 20).unwrap_err();
        assert!(
            e.message()
                .ends_with("it is not UTF-8 text (invalid byte at offset 6)"),
            "{}",
            e.message()
        );
        std::fs::remove_file(path).unwrap();
        let dir = std::env::temp_dir();
        let e = read_text(&dir, 1 << 20).unwrap_err();
        assert!(e.message().ends_with(": it is a directory"), "{}", e.message());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_devices() {
        let e = read_text(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(
            e.message(),
            "error: cannot read /dev/zero: it is not a regular file (a device, FIFO or socket)"
        );
    }
}
