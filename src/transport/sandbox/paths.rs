//! Rule paths a sandboxed server cannot redirect. The server may write
//! `PLUGIN_DATA` (and every writable folder of its profile), so between
//! two starts it can plant a link there (`PLUGIN_DATA/.tmp -> /root`);
//! a rule path resolved through such a link would open the link's target
//! to the next start. So: the temp folder is made a real folder again at
//! every start ([`reset_tmp`]), and every rule path is resolved here one
//! component at a time ([`check_rules`]): one whose resolution passes
//! through a link inside a writable folder is left out of the rules; the
//! others are given to the OS as their resolved (link-free) path, which
//! Linux opens refusing any link.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Links followed at most while resolving one path (Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Makes `tmp` a real folder of mode `0700`: a link or file there (the
/// server's doing) is removed first.
///
/// # Errors
/// It cannot be removed, created or restricted.
pub fn reset_tmp(tmp: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(tmp) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => std::fs::remove_file(tmp)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if let Some(parent) = tmp.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::create_dir(tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The rule paths after [`check_rules`].
#[derive(Debug, Default, PartialEq)]
pub struct Checked {
    /// The readable paths as listed, and as the OS is to open them.
    pub read: Vec<(PathBuf, PathBuf)>,
    /// The writable paths as listed, and as the OS is to open them.
    pub write: Vec<(PathBuf, PathBuf)>,
    /// Left out: each path and the link in a writable folder it passes.
    pub refused: Vec<(PathBuf, PathBuf)>,
}

/// Resolves every path of `read` and `write`, refusing those whose
/// resolution passes through a link inside a folder of `write`. A path
/// that cannot be resolved (missing) is kept as listed (the OS side
/// reports it missing).
pub fn check_rules(read: &[PathBuf], write: &[PathBuf]) -> Checked {
    if !cfg!(unix) {
        let same = |ps: &[PathBuf]| ps.iter().map(|p| (p.clone(), p.clone())).collect();
        return Checked {
            read: same(read),
            write: same(write),
            refused: Vec::new(),
        };
    }
    let writable: Vec<PathBuf> = write.iter().filter_map(|w| w.canonicalize().ok()).collect();
    let mut out = Checked::default();
    for (paths, into) in [(read, &mut out.read), (write, &mut out.write)] {
        for p in paths {
            match resolve(p, &writable) {
                Resolved::Real(real) => into.push((p.clone(), real)),
                Resolved::Unresolved => into.push((p.clone(), p.clone())),
                Resolved::Redirected(link) => out.refused.push((p.clone(), link)),
            }
        }
    }
    out
}

enum Resolved {
    /// The path with every link resolved.
    Real(PathBuf),
    /// It does not exist or cannot be examined.
    Unresolved,
    /// Its resolution passes through this link in a writable folder.
    Redirected(PathBuf),
}

/// Resolves absolute `path` component by component, as the kernel would,
/// stopping at a link strictly inside a folder of `writable` (canonical).
fn resolve(path: &Path, writable: &[PathBuf]) -> Resolved {
    if !path.is_absolute() {
        return Resolved::Unresolved;
    }
    // The components still to walk, the next one last.
    let mut rest: Vec<OsString> = Vec::new();
    push_components(&mut rest, path);
    let mut cur = PathBuf::from("/");
    let mut links = 0;
    while let Some(c) = rest.pop() {
        if c == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&c);
        let Ok(meta) = std::fs::symlink_metadata(&next) else {
            return Resolved::Unresolved;
        };
        if !meta.file_type().is_symlink() {
            cur = next;
            continue;
        }
        if writable.iter().any(|w| next.starts_with(w) && next != *w) {
            return Resolved::Redirected(next);
        }
        links += 1;
        let Ok(target) = std::fs::read_link(&next) else {
            return Resolved::Unresolved;
        };
        if links > MAX_LINKS {
            return Resolved::Unresolved;
        }
        if target.is_absolute() {
            cur = PathBuf::from("/");
        }
        push_components(&mut rest, &target);
    }
    Resolved::Real(cur)
}

/// Pushes the components of `path` onto `rest` so the first is popped
/// first (`..` kept as `..`, `/` and `.` dropped).
fn push_components(rest: &mut Vec<OsString>, path: &Path) {
    let parts = path.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_owned()),
        Component::ParentDir => Some(OsString::from("..")),
        _ => None,
    });
    let parts: Vec<OsString> = parts.collect();
    rest.extend(parts.into_iter().rev());
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_planted_tmp_link_is_replaced_by_a_private_folder() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::create_dir(&secret).unwrap();
        let tmp = dir.path().join("data/.tmp");
        std::fs::create_dir(dir.path().join("data")).unwrap();
        symlink(&secret, &tmp).unwrap();
        reset_tmp(&tmp).unwrap();
        let meta = std::fs::symlink_metadata(&tmp).unwrap();
        assert!(meta.is_dir() && !meta.file_type().is_symlink());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert!(secret.is_dir(), "the link's target is left alone");
        std::fs::remove_dir(&tmp).unwrap();
        std::fs::write(&tmp, "x").unwrap();
        reset_tmp(&tmp).unwrap();
        assert!(std::fs::symlink_metadata(&tmp).unwrap().is_dir());
    }

    #[test]
    fn links_inside_writable_folders_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (data, secret, shared) = (base.join("data"), base.join("secret"), base.join("usr"));
        for d in [&data, &secret, &shared.join("lib")] {
            std::fs::create_dir_all(d).unwrap();
        }
        symlink(&secret, data.join(".tmp")).unwrap();
        symlink(&secret, data.join("sub")).unwrap();
        // A link outside the writable folders (as `/lib -> usr/lib`) is followed.
        symlink("usr/lib", base.join("lib")).unwrap();
        let read = [base.join("lib"), data.join("sub/x/..")];
        let write = [data.clone(), data.join(".tmp"), base.join("absent")];
        let checked = check_rules(&read, &write);
        assert_eq!(checked.read, [(base.join("lib"), shared.join("lib"))]);
        assert_eq!(
            checked.write,
            [
                (data.clone(), data.clone()),
                (base.join("absent"), base.join("absent"))
            ]
        );
        assert_eq!(
            checked.refused,
            [
                (data.join("sub/x/.."), data.join("sub")),
                (data.join(".tmp"), data.join(".tmp"))
            ]
        );
    }
}
