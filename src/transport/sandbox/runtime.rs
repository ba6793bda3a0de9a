//! What a sandboxed server needs to read to run at all, besides the
//! system folders: the install prefix of its program and of the
//! interpreter its `#!` line names (`#!/usr/bin/env node` → the `node`
//! found on the child's `PATH`), and for `npx` / `npm` the npm cache, for
//! `uvx` / `uv` uv's cache, read-only (install a package ahead: a
//! sandboxed `npx -y` cannot download or unpack one).
//!
//! An install prefix is the folder above `bin/` when the program is in a
//! `bin` folder (`~/.nvm/versions/node/v22/bin/node` →
//! `~/.nvm/versions/node/v22`), else the program's folder; never `/`, the
//! home folder or a folder right in it such as `~/.local` (then only the
//! program's folder). Only canonical paths count (links resolved).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::limits::SANDBOX_SHEBANG_BYTES;

/// The readable folders `program` needs (its prefix, its interpreter's,
/// a package manager's cache), given the child's `PATH` and `home`.
pub fn runtime_reads(
    program: &Path,
    path_var: Option<&OsStr>,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    // The canonical path only: a path as written may pass through a
    // folder (`/home/u/.ssh/../…`) whose tree must stay closed.
    if let Ok(real) = program.canonicalize() {
        push(prefix_of(&real, home));
    }
    if let Some(Ok(real)) = interpreter_of(program, path_var).map(|i| i.canonicalize()) {
        push(prefix_of(&real, home));
    }
    let name = program
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or_default();
    let name = name.trim_end_matches(".cmd").trim_end_matches(".exe");
    if let Some(home) = home {
        match name {
            "npx" | "npm" => push(home.join(".npm")),
            "uvx" | "uv" => {
                push(home.join(".cache").join("uv"));
                push(home.join(".local").join("share").join("uv"));
            }
            _ => {}
        }
    }
    out
}

/// The install prefix of `file` (see the module docs).
fn prefix_of(file: &Path, home: Option<&Path>) -> PathBuf {
    let dir = file.parent().unwrap_or(file);
    let above = match dir.file_name() == Some(OsStr::new("bin")) {
        true => dir.parent(),
        false => None,
    };
    // Never the home folder or a folder right in it (`~/.local` holds
    // `share/keyrings`): then only the `bin` folder itself.
    let in_home = |p: &Path| Some(p) == home || p.parent() == home;
    match above {
        Some(p) if p.parent().is_some() && !in_home(p) => p.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// The interpreter of a `#!` script: its path, or for `env` the command
/// it names, looked up on `path_var`.
fn interpreter_of(program: &Path, path_var: Option<&OsStr>) -> Option<PathBuf> {
    let mut head = [0u8; SANDBOX_SHEBANG_BYTES];
    let mut file = std::fs::File::open(program).ok()?;
    let n = file.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_ascii_whitespace();
    let interpreter = PathBuf::from(words.next()?);
    if interpreter.file_name() != Some(OsStr::new("env")) {
        return Some(interpreter);
    }
    let command = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
    let path_var: OsString = path_var?.to_owned();
    std::env::split_paths(&path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(command))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_interpreters_and_package_caches() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let node_bin = home.join(".nvm/v22/bin");
        std::fs::create_dir_all(&node_bin).unwrap();
        std::fs::write(node_bin.join("node"), "").unwrap();
        std::fs::write(node_bin.join("npx"), "#!/usr/bin/env -S node --x\n").unwrap();
        let path = std::env::join_paths([&node_bin]).unwrap();
        let reads = runtime_reads(&node_bin.join("npx"), Some(&path), Some(&home));
        assert_eq!(reads, [home.join(".nvm/v22"), home.join(".npm")]);
        // A program right in ~/bin: its folder, never the home folder.
        assert_eq!(
            prefix_of(&home.join("bin/tool"), Some(&home)),
            home.join("bin")
        );
        assert_eq!(prefix_of(Path::new("/bin/sh"), None), PathBuf::from("/bin"));
        assert_eq!(
            prefix_of(Path::new("/opt/x/run"), None),
            PathBuf::from("/opt/x")
        );
    }
}
