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
//! home folder or a folder right in it such as `~/.local` or `~/bin`
//! (then the `bin` folder, or when that is one of them too, only the
//! program file itself). Only canonical paths count (links resolved);
//! `env`'s command is looked up as `execvp` does (the first executable
//! regular file on `PATH`, links followed).

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
    // Never `/`, the home folder or a folder right in it (`~/.local`
    // holds `share/keyrings`, the home folder everything).
    let real_home = home.and_then(|h| h.canonicalize().ok());
    let homes = [home, real_home.as_deref()];
    let in_home = |p: &Path| {
        homes
            .iter()
            .any(|h| h.is_some() && (Some(p) == *h || p.parent() == *h))
    };
    let allowed = |p: &&Path| p.parent().is_some() && !in_home(p);
    match above.filter(allowed).or(Some(dir).filter(allowed)) {
        Some(p) => p.to_path_buf(),
        None => file.to_path_buf(),
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
        .find(|p| is_executable(p))
}

/// Whether `path` (links followed) is a regular file `execvp` would run.
fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
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
        make_executable(&node_bin.join("node"));
        std::fs::write(node_bin.join("npx"), "#!/usr/bin/env -S node --x\n").unwrap();
        let path = std::env::join_paths([&node_bin]).unwrap();
        let reads = runtime_reads(&node_bin.join("npx"), Some(&path), Some(&home));
        assert_eq!(reads, [home.join(".nvm/v22"), home.join(".npm")]);
        // A program in ~/bin or right in ~: only the file itself.
        let tool = home.join("bin/tool");
        assert_eq!(prefix_of(&tool, Some(&home)), tool);
        let script = home.join("server.sh");
        assert_eq!(prefix_of(&script, Some(&home)), script);
        assert_eq!(
            prefix_of(&home.join(".local/bin/x"), Some(&home)),
            home.join(".local/bin")
        );
        assert_eq!(prefix_of(Path::new("/init"), None), PathBuf::from("/init"));
        assert_eq!(prefix_of(Path::new("/bin/sh"), None), PathBuf::from("/bin"));
        assert_eq!(
            prefix_of(Path::new("/opt/x/run"), None),
            PathBuf::from("/opt/x")
        );
    }

    #[cfg(unix)]
    fn make_executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[cfg(not(unix))]
    fn make_executable(_: &Path) {}

    #[test]
    fn env_looks_up_executables_only_and_never_opens_the_home_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let tools = tmp.path().join("opt/tools");
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::create_dir_all(home.join("lib")).unwrap();
        let script = tools.join("server");
        std::fs::write(&script, "#!/usr/bin/env node\n").unwrap();
        // A plain file named `node` right in the home folder comes first on PATH.
        std::fs::write(home.join("node"), "not a program").unwrap();
        let real = tools.join("node");
        std::fs::write(&real, "").unwrap();
        make_executable(&real);
        let path = std::env::join_paths([&home, &tools]).unwrap();
        let found = interpreter_of(&script, Some(&path));
        assert_eq!(found, Some(real.clone()));
        // An executable right in the home folder: only that file is opened.
        make_executable(&home.join("node"));
        let reads = runtime_reads(&script, Some(&path), Some(&home));
        let home_node = home.canonicalize().unwrap().join("node");
        assert_eq!(reads, [tools.canonicalize().unwrap(), home_node]);
        // A link on PATH to an executable counts (as execvp follows it).
        let linked = tmp.path().join("opt/linked");
        std::fs::create_dir_all(&linked).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&real, linked.join("node")).unwrap();
        let path = std::env::join_paths([&linked]).unwrap();
        #[cfg(unix)]
        assert_eq!(
            interpreter_of(&script, Some(&path)),
            Some(linked.join("node"))
        );
    }
}
