//! Confining a tool's path to the memory root.
//!
//! A path a model passes is checked twice. Lexically ([`RelativePath::parse`]): it must be
//! relative, free of `..`, of percent-encoded bytes (`%2e%2e`, `%2f`), of backslashes, of
//! control characters and of a leading `~`. On disk ([`resolve`]): every component below the
//! root is looked at without following links, and a symlink anywhere (a symlinked parent
//! folder included) is refused. The root itself may be a link the user set up. A hidden name
//! (`.received`, `.shared_revision`, a `.x.tmp-PID` temporary file) is not memory: it is
//! refused as the walk and `memory_list` leave it out. [`open_file`] opens only a regular file:
//! the type the walk saw is checked before the open (a FIFO, a device or a socket is refused
//! without being opened), the open itself does not block or follow a link, and the opened file
//! must be the very file the walk saw, so a component swapped in between is caught.

use std::fs::{self, File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

/// Why a path was refused before touching the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// An absolute path (`/x`, `C:\x`).
    Absolute,
    /// A `~` component, which would mean a home folder elsewhere.
    HomeShorthand,
    /// A `..` component.
    Parent,
    /// A percent-encoded byte such as `%2e` or `%2f`.
    PercentEncoded,
    /// A backslash (another platform's separator).
    Backslash,
    /// A control character.
    Control,
    /// A hidden name (a leading `.`): the memory system's own state and temporary files.
    Hidden,
}

impl Refusal {
    /// Why, in words.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Refusal::Absolute => {
                "absolute paths are refused; give a path relative to the memory root"
            }
            Refusal::HomeShorthand => "`~` is refused; give a path relative to the memory root",
            Refusal::Parent => "`..` is refused; paths stay inside the memory root",
            Refusal::PercentEncoded => "percent-encoded characters are refused",
            Refusal::Backslash => "backslashes are refused; separate folders with `/`",
            Refusal::Control => "control characters are refused",
            Refusal::Hidden => {
                "hidden files (a name starting with `.`) are the memory system's own state, not memory"
            }
        }
    }
}

/// A path relative to the memory root made of plain names only (`""` is the root).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RelativePath {
    components: Vec<String>,
}

impl RelativePath {
    /// Checks `input` lexically. Empty components and `.` are dropped (`a//./b` is `a/b`).
    pub(crate) fn parse(input: &str) -> Result<RelativePath, Refusal> {
        if input.chars().any(char::is_control) {
            return Err(Refusal::Control);
        }
        if input.contains('\\') {
            return Err(Refusal::Backslash);
        }
        if has_percent_escape(input) {
            return Err(Refusal::PercentEncoded);
        }
        if input.starts_with('/') || has_drive_prefix(input) {
            return Err(Refusal::Absolute);
        }
        let mut components = Vec::new();
        for part in input.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(Refusal::Parent),
                "~" => return Err(Refusal::HomeShorthand),
                name if name.starts_with('.') => return Err(Refusal::Hidden),
                name if components.is_empty() && name.starts_with('~') => {
                    return Err(Refusal::HomeShorthand);
                }
                name => components.push(name.to_owned()),
            }
        }
        Ok(RelativePath { components })
    }

    /// The root itself.
    pub(crate) fn root() -> RelativePath {
        RelativePath::default()
    }

    /// True for the root.
    pub(crate) fn is_root(&self) -> bool {
        self.components.is_empty()
    }

    /// The path with `/` separators (`""` for the root).
    pub(crate) fn display(&self) -> String {
        self.components.join("/")
    }

    /// The path under `root`.
    pub(crate) fn under(&self, root: &Path) -> PathBuf {
        let mut path = root.to_path_buf();
        path.extend(&self.components);
        path
    }

    /// This path with `name` appended (a name read from a directory listing).
    pub(crate) fn join(&self, name: &str) -> RelativePath {
        let mut components = self.components.clone();
        components.push(name.to_owned());
        RelativePath { components }
    }

    /// The path's components.
    pub(crate) fn components(&self) -> &[String] {
        &self.components
    }
}

/// `%` followed by two hex digits.
fn has_percent_escape(input: &str) -> bool {
    input
        .as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// `C:` and the like at the start.
fn has_drive_prefix(input: &str) -> bool {
    let bytes = input.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Why a checked path could not be resolved on disk.
#[derive(Debug)]
pub(crate) enum ResolveError {
    /// This prefix of the path does not exist.
    NotFound(String),
    /// This prefix of the path is a symlink.
    Symlink(String),
    /// This prefix of the path is a file where a folder was needed.
    NotAFolder(String),
    /// The path is not a regular file (a FIFO, a device, a socket, ...), named in words.
    NotRegular(&'static str),
    /// The file changed between the check and the open (a component was swapped).
    Changed,
    /// The disk said no.
    Io(io::Error),
}

/// Walks `relative` below `root` without following links and returns the final path and its
/// metadata. The root is followed (it may be a link the user set up); nothing below it is.
pub(crate) fn resolve(
    root: &Path,
    relative: &RelativePath,
) -> Result<(PathBuf, Metadata), ResolveError> {
    let mut path = root.to_path_buf();
    let mut metadata = fs::metadata(root).map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => ResolveError::NotFound(String::new()),
        _ => ResolveError::Io(error),
    })?;
    let mut shown = String::new();
    for component in relative.components() {
        if !metadata.is_dir() {
            return Err(ResolveError::NotAFolder(shown));
        }
        if !shown.is_empty() {
            shown.push('/');
        }
        shown.push_str(component);
        path.push(component);
        metadata = fs::symlink_metadata(&path).map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => ResolveError::NotFound(shown.clone()),
            _ => ResolveError::Io(error),
        })?;
        if metadata.file_type().is_symlink() {
            return Err(ResolveError::Symlink(shown));
        }
    }
    Ok((path, metadata))
}

/// Resolves `relative` and opens it as a file, checking that the opened file is the one the
/// walk saw (same device and inode on Unix).
pub(crate) fn open_file(
    root: &Path,
    relative: &RelativePath,
) -> Result<(File, Metadata), ResolveError> {
    let (path, walked) = resolve(root, relative)?;
    if !walked.is_file() {
        return Err(ResolveError::NotRegular(describe(&walked)));
    }
    let file = open_without_blocking(&path).map_err(ResolveError::Io)?;
    let opened = file.metadata().map_err(ResolveError::Io)?;
    if !opened.is_file() || !same_file(&walked, &opened) {
        return Err(ResolveError::Changed);
    }
    Ok((file, opened))
}

/// Opens `path` for reading without waiting for a writer (a FIFO swapped in after the type
/// check returns at once) and without following a final symlink.
fn open_without_blocking(path: &Path) -> io::Result<File> {
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOFOLLOW;
        options.custom_flags(i32::try_from(flags.bits()).unwrap_or(0));
    }
    options.open(path)
}

/// How [`ResolveError::NotRegular`] names a folder.
pub(crate) const FOLDER: &str = "a folder";

/// What a file that is not a regular file is, in words.
fn describe(metadata: &Metadata) -> &'static str {
    let kind = metadata.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        FOLDER
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len() && a.is_file() == b.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lexical_refusals() {
        for (input, refusal) in [
            ("/etc/passwd", Refusal::Absolute),
            ("C:/x.md", Refusal::Absolute),
            ("../state.sqlite", Refusal::Parent),
            ("notes/../../x", Refusal::Parent),
            ("a/b/..", Refusal::Parent),
            ("%2e%2e/x", Refusal::PercentEncoded),
            ("notes%2F..%2Fx", Refusal::PercentEncoded),
            ("a/%252e", Refusal::PercentEncoded),
            ("..\\x", Refusal::Backslash),
            ("a\nb", Refusal::Control),
            ("~/x", Refusal::HomeShorthand),
            ("~root/x", Refusal::HomeShorthand),
        ] {
            assert_eq!(RelativePath::parse(input), Err(refusal), "{input}");
        }
        let ok = RelativePath::parse("./notes//a.md").unwrap();
        assert_eq!(ok.display(), "notes/a.md");
        assert!(RelativePath::parse("").unwrap().is_root());
        assert_eq!(
            RelativePath::parse("100%.md").unwrap().display(),
            "100%.md",
            "a lone percent sign is a name"
        );
    }

    proptest! {
        #[test]
        fn an_accepted_path_never_climbs_or_escapes(input in "[a-z./%~\\\\2eE]{0,16}") {
            if let Ok(path) = RelativePath::parse(&input) {
                let root = Path::new("/memroot");
                let under = path.under(root);
                prop_assert!(under.starts_with(root));
                prop_assert!(path.components().iter().all(|c| c != ".." && c != "." && !c.is_empty() && !c.contains('/')));
                prop_assert!(!input.to_ascii_lowercase().contains("%2e"));
            }
        }
    }
}
